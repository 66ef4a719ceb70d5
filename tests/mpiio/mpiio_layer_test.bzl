"""MPI-IO programs run with and without flowio's layer, or with it alone."""

load("@rules_cc//cc:defs.bzl", "cc_binary")
load("//tests/support:expected_failures.bzl", "EXPECTED_FAILURES")
load("//tests/support:mpi_test.bzl", "SANITIZED_RANKS", "expected_failure_tests", "rank_tags")

_LAYER = "//api/mpiio:libflowio_mpiio.so"

# Absolute labels: other packages (//tests/scale) use the macros too.
_TEST_HELPERS = "//tests/mpiio:mpiio_test"
_RUN_BOTH = "//tests/mpiio:run_with_and_without_layer.sh"
_RUN_LAYER = "//tests/mpiio:run_with_layer.sh"

def mpiio_layer_test(name, ranks = [2], size = "medium", sanitized_ranks = SANITIZED_RANKS, deps = [], tags = [], switched_off_run = True):
    """Builds the C program `name`.c and a test `name`_<N>ranks per N.

    Each test runs the program under mpiexec on N ranks twice, against
    MPICH's own MPI-IO and with the layer preloaded, and fails unless both
    runs succeed and agree (run_with_and_without_layer.sh); and a third
    time with the layer switched off, unless switched_off_run is False
    (programs that move GiBs). Only the rank counts in sanitized_ranks run
    again under --config=asan.
    """
    cc_binary(
        name = name,
        srcs = [name + ".c"],
        copts = ["-std=c11"],
        deps = deps + [
            _TEST_HELPERS,
            "//third_party/system:mpi",
        ],
        testonly = True,
    )
    for n in ranks:
        native.sh_test(
            name = "%s_%dranks" % (name, n),
            srcs = [_RUN_BOTH],
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
            env = {} if switched_off_run else {"SKIP_SWITCHED_OFF": "1"},
            size = size,
            tags = tags + rank_tags(n, sanitized_ranks),
        )

def mpiio_layer_only_test(name, ranks = [2], size = "medium", expected_failure_ranks = None, deps = [], tags = [], layer = _LAYER, sanitized_ranks = SANITIZED_RANKS):
    """Builds the C program `name`.c and a test `name`_<N>ranks per N.

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
        srcs = [name + ".c"],
        copts = ["-std=c11"],
        deps = deps + [
            _TEST_HELPERS,
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
            srcs = [_RUN_LAYER],
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
            runner = _RUN_LAYER,
            runner_args = [str(n), "$(location :%s)" % name, "$(location %s)" % layer],
            case_flag = "--only=",
            data = data,
            size = size,
            tags = tags,
        )
