"""MPI-IO programs run with and without flowio's layer, or with it alone."""

load("@rules_cc//cc:defs.bzl", "cc_binary")
load("//tests/support:mpi_test.bzl", "SANITIZED_RANKS", "mpi_script_tests", "runner_tests")

_LAYER = "//api/mpiio:libflowio_mpiio.so"

# Absolute labels: other packages (//tests/scale) use the macros too.
_TEST_HELPERS = "//tests/mpiio:mpiio_test"
_RUN_BOTH = "//tests/mpiio:run_with_and_without_layer.sh"
_RUN_LAYER = "//tests/mpiio:run_with_layer.sh"

def _program(name, deps = [], program = None):
    """The C program `program`.c (default `name`.c) as `name`, with the
    programs' shared checks."""
    cc_binary(
        name = name,
        srcs = [(program or name) + ".c"],
        copts = ["-std=c11"],
        deps = deps + [
            _TEST_HELPERS,
            "//third_party/system:mpi",
        ],
        testonly = True,
    )

def mpiio_layer_test(name, ranks = [2], size = "medium", tags = [], sanitized_ranks = SANITIZED_RANKS, deps = [], switched_off_run = True):
    """Builds the C program `name`.c and a test `name`_<N>ranks per N.

    Each test runs the program under mpiexec on N ranks twice, against
    MPICH's own MPI-IO and with the layer preloaded, and fails unless both
    runs succeed and agree (run_with_and_without_layer.sh); and a third
    time with the layer switched off, unless switched_off_run is False
    (programs that move GiBs). Only the rank counts in sanitized_ranks run
    again under --config=asan.
    """
    _program(name, deps)
    env = {} if switched_off_run else {"SKIP_SWITCHED_OFF": "1"}
    mpi_script_tests(
        name = name,
        script = _RUN_BOTH,
        args = ["$(location :%s)" % name, "$(location %s)" % _LAYER],
        data = [":" + name, _LAYER],
        ranks = ranks,
        env_by_ranks = {n: env for n in ranks},
        size = size,
        tags = tags,
        sanitized_ranks = sanitized_ranks,
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
    _program(name, deps, program)
    runner_tests(
        name = name,
        runner = _RUN_LAYER,
        runner_args = ["$(location :%s)" % name, "$(location %s)" % layer],
        case_flag = "--only=",
        skip_flag = "--skip=",
        data = [":" + name, layer],
        ranks = ranks,
        expected_failure_ranks = expected_failure_ranks,
        size = size,
        tags = tags,
        sanitized_ranks = sanitized_ranks,
    )
