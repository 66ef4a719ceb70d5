"""MPI-IO programs run with and without flowio's layer, or with it alone."""

load("@rules_cc//cc:defs.bzl", "cc_binary")
load("//tests/support:expected_failures.bzl", "EXPECTED_FAILURES")
load("//tests/support:mpi_test.bzl", "SANITIZED_RANKS", "expected_failure_tests", "rank_tags")

_LAYER = "//api/mpiio:libflowio_mpiio.so"

def mpiio_layer_test(name, ranks = [2], size = "medium", tags = [], sanitized_ranks = SANITIZED_RANKS):
    """Builds the C program `name`.c and a test `name`_<N>ranks per N.

    Each test runs the program under mpiexec on N ranks twice, against
    MPICH's own MPI-IO and with the layer preloaded, and fails unless both
    runs succeed and agree (run_with_and_without_layer.sh). Only the rank
    counts in sanitized_ranks run again under --config=asan.
    """
    cc_binary(
        name = name,
        srcs = [name + ".c"],
        copts = ["-std=c11"],
        deps = [
            ":mpiio_test",
            "//third_party/system:mpi",
        ],
        testonly = True,
    )
    for n in ranks:
        native.sh_test(
            name = "%s_%dranks" % (name, n),
            srcs = ["run_with_and_without_layer.sh"],
            args = [
                str(n),
                "$(location :%s)" % name,
                "$(location %s)" % _LAYER,
            ],
            data = [
                ":" + name,
                _LAYER,
                "//tests/support:lsan_suppressions.txt",
                "//tests/support:mpi_runner_setup.sh",
            ],
            size = size,
            tags = tags + rank_tags(n, sanitized_ranks),
        )

def mpiio_layer_only_test(name, ranks = [2], size = "medium", expected_failure_ranks = None, deps = [], tags = [], layer = _LAYER, sanitized_ranks = SANITIZED_RANKS, program = None):
    """Builds the C program `name`.c and a test `name`_<N>ranks per N.

    `program` names another C program to build as `name` (one that a
    mpiio_layer_test also runs, at rank counts where MPICH's own MPI-IO is
    too slow to compare with).

    Each test runs the program on N ranks with the layer preloaded, alone
    (run_with_layer.sh): for calls MPICH's own MPI-IO crashes on, hangs on
    or gets wrong. The program checks its own results. Its cases listed in
    expected_failures.bzl are skipped there (--skip=...) and run each as
    `name`_xfail_<case>_<N>ranks (--only=<case>) through
    expected_failure.sh, for each N in expected_failure_ranks (default:
    `ranks`). `layer` is the layer to preload (a test build of it, say).
    Only the rank counts in sanitized_ranks run again under --config=asan.
    """
    cc_binary(
        name = name,
        srcs = [(program or name) + ".c"],
        copts = ["-std=c11"],
        deps = deps + [
            ":mpiio_test",
            "//third_party/system:mpi",
        ],
        testonly = True,
    )
    expected = EXPECTED_FAILURES.get("//%s:%s" % (native.package_name(), name), {})
    skipped = ["--skip=" + ",".join(expected.keys())] if expected else []
    data = [
        ":" + name,
        layer,
        "//tests/support:lsan_suppressions.txt",
        "//tests/support:mpi_runner_setup.sh",
    ]
    for n in ranks:
        native.sh_test(
            name = "%s_%dranks" % (name, n),
            srcs = ["run_with_layer.sh"],
            args = [str(n), "$(location :%s)" % name, "$(location %s)" % layer] + skipped,
            data = data,
            size = size,
            tags = tags + rank_tags(n, sanitized_ranks),
        )
        expected_failure_tests(
            name = name,
            ranks = n,
            expected = expected,
            expected_failure_ranks = expected_failure_ranks,
            runner = "run_with_layer.sh",
            runner_args = [str(n), "$(location :%s)" % name, "$(location %s)" % layer],
            case_flag = "--only=",
            data = data,
            size = size,
            tags = tags,
        )
