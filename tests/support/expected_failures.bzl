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

# None today: the collective engine's summary gather carries each
# process's refusal of bad arguments and its direction.
EXPECTED_FAILURES = {}
