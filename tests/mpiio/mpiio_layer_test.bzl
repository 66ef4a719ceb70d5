"""mpiio_layer_test: an MPI-IO program run with and without flowio's layer."""

load("@rules_cc//cc:defs.bzl", "cc_binary")

_LAYER = "//api/mpiio:libflowio_mpiio.so"

def mpiio_layer_test(name, ranks = [2], size = "medium"):
    """Builds the C program `name`.c and a test `name`_<N>ranks per N.

    Each test runs the program under mpiexec on N ranks twice, against
    MPICH's own MPI-IO and with the layer preloaded, and fails unless both
    runs succeed and agree (run_with_and_without_layer.sh).
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
                "//tests/support:sanitizer_mpiexec_args.sh",
            ],
            size = size,
            tags = ["mpi"],
        )
