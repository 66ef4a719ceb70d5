"""mpi_test: one doctest binary run under mpiexec on several rank counts."""

load("@rules_cc//cc:defs.bzl", "cc_binary")

def mpi_test(name, srcs, deps = [], ranks = [1, 2, 4], args = [], env_by_ranks = {}, size = "medium", tags = []):
    """Builds `name`_bin and a test `name`_<N>ranks for each N in `ranks`.

    Every test runs the same binary under mpiexec with N ranks; the job
    fails when any rank fails. env_by_ranks maps a rank count to extra
    environment variables for that test.
    """
    cc_binary(
        name = name + "_bin",
        srcs = srcs,
        deps = deps + ["//tests/support:mpi_doctest_main"],
        testonly = True,
    )
    for n in ranks:
        native.sh_test(
            name = "%s_%dranks" % (name, n),
            srcs = ["//tests/support:run_mpi_test.sh"],
            args = [str(n), "$(location :%s_bin)" % name] + args,
            data = [
                ":" + name + "_bin",
                "//tests/support:lsan_suppressions.txt",
                "//tests/support:sanitizer_mpiexec_args.sh",
            ],
            env = env_by_ranks.get(n, {}),
            size = size,
            tags = tags + ["mpi"],
        )
