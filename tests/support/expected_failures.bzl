"""The tests known to fail today, each with the work it waits for.

Keyed by the test's Bazel label (without the _<N>ranks suffix), then by
doctest test case (or, for the MPI-IO programs, by the case argument).
mpi_test and mpiio_layer_only_test run each listed case as a test of its
own through expected_failure.sh: it passes while the case fails (its log
says "flowio-test: EXPECTED FAILURE"), and fails once the case passes,
asking for its entry to be removed here. tools/test.sh counts these apart
from passes. Remove an entry when the work it names lands; never add one to
hide a failure that has no owner.
"""

# Issue 15, item 1 (error agreement in every stage) and item 4 (bad
# arguments on one rank of a collective call): both wait for the collective
# engine's summary gather at the start of every call (the lead's
# restructuring of runtime/collective_operation.cc).
_ENGINE = "waits for the collective engine (issue 15): "

_ONE_RANK = _ENGINE + "a rank whose arguments are bad fails at the call and skips the " + \
            "collective; the others wait for it forever (the summary gather must carry a " + \
            "failed-at-call flag and the error code)"

# Helper "conformance" (issue 16) makes the flattener read large-count
# types (MPI_Type_get_envelope_c), on its branch (commit f00f053).
_LARGE_COUNT = "waits for large-count flattening (issue 16, helper conformance): MPI refuses " + \
               "MPI_Type_get_envelope on a type made by a _c constructor, and the job aborts"

EXPECTED_FAILURES = {
    "//tests/api:datatype_corners_test": {
        "Api.DatatypeCorners.LargeCountFiletypes": _LARGE_COUNT,
        "Api.DatatypeCorners.LargeCountMemoryTypes": _LARGE_COUNT,
    },
    "//tests/mpiio:datatype_corners": {
        "large_count_filetypes": _LARGE_COUNT,
        "large_count_memory_types": _LARGE_COUNT,
    },
    "//tests/mpiio:bad_input_layer": {
        "NegativeCountOnOneRank": _ONE_RANK,
        "UncommittedTypeOnOneRank": _ONE_RANK,
        "ReadWhileOthersWrite": _ENGINE + "a rank reading while the others write succeeds " +
                                "on every rank (the summary gather must carry the direction)",
    },
    "//tests/api:bad_collective_test": {
        "Api.BadCollective.NegativeCountOnOneRank": _ONE_RANK,
        "Api.BadCollective.UncommittedTypeOnOneRank": _ONE_RANK,
        "Api.BadCollective.NullBufferOnOneRank": _ONE_RANK,
        "Api.BadCollective.PartialEtypeOnOneRank": _ONE_RANK,
        "Api.BadCollective.ReadWhileOthersWrite": _ENGINE + "a rank reading while the others " +
                                                  "write succeeds on every rank (the summary " +
                                                  "gather must carry the direction)",
    },
    "//tests/api:fault_test": {
        "Api.Fault.ShortReadNeverInventsData.TwoPhase": "waits for a fix in the collective " +
            "read (runtime/collective_operation.cc, read_window): an aggregator whose read " +
            "comes back short sends the bytes up to the file's size (fstat) instead of up to " +
            "what it read, so clients get zeros counted as data",
    },
}
