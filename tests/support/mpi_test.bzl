"""mpi_test: one doctest binary run under mpiexec on several rank counts."""

load("@rules_cc//cc:defs.bzl", "cc_binary")
load("//tests/support:expected_failures.bzl", "EXPECTED_FAILURES")

_RUN_DATA = [
    "//tests/support:lsan_suppressions.txt",
    "//tests/support:mpi_runner_setup.sh",
]

# The rank counts whose tests also run under --config=asan (tools/test.sh
# leaves out tests tagged "not_sanitized"). Four sanitized ranks on two
# cores run five to ten times longer than two and exercise the same code, so
# only the tests whose paths change with more than two processes (aggregator
# subsets, lock queues) ask for 4 through their own sanitized_ranks.
SANITIZED_RANKS = [1, 2]

def rank_tags(n, sanitized_ranks):
    """The tags of a multi-rank test run on `n` ranks."""
    return ["mpi"] + ([] if n in sanitized_ranks else ["not_sanitized"])

def expected_failure_tests(name, ranks, expected, expected_failure_ranks, runner, runner_args, case_flag, data, size, tags, extra_args = [], env = {}):
    """One test `name`_xfail_<case>_<ranks>ranks per case of `expected`.

    `expected` maps a case to the work it waits for (expected_failures.bzl).
    Each test runs `runner` with runner_args, case_flag + case and
    extra_args through expected_failure.sh, which passes while the case
    fails. None when expected_failure_ranks is given and leaves out `ranks`.
    """
    if expected_failure_ranks != None and ranks not in expected_failure_ranks:
        return
    for case, reason in expected.items():
        native.sh_test(
            name = "%s_xfail_%s_%dranks" % (name, case.replace(".", "_"), ranks),
            srcs = ["//tests/support:expected_failure.sh"],
            args = [
                "'%s'" % reason.replace("'", ""),
                "$(location %s)" % runner,
            ] + runner_args + [case_flag + case] + extra_args,
            data = data + [runner],
            env = env,
            size = size,
            tags = tags + ["mpi", "expected_failure"],
        )

def mpi_test(name, srcs, deps = [], ranks = [1, 2, 4], args = [], env_by_ranks = {}, size = "medium", tags = [], expected_failure_ranks = None, sanitized_ranks = SANITIZED_RANKS):
    """Builds `name`_bin and a test `name`_<N>ranks for each N in `ranks`.

    Every test runs the same binary under mpiexec with N ranks; the job
    fails when any rank fails. env_by_ranks maps a rank count to extra
    environment variables for that test. Test cases listed for this test in
    expected_failures.bzl are left out of `name`_<N>ranks and run each as
    `name`_xfail_<case>_<N>ranks through expected_failure.sh, for each N in
    expected_failure_ranks (default: `ranks`). Only the rank counts in
    sanitized_ranks run again under --config=asan.
    """
    cc_binary(
        name = name + "_bin",
        srcs = srcs,
        deps = deps + ["//tests/support:mpi_doctest_main"],
        testonly = True,
    )
    expected = EXPECTED_FAILURES.get("//%s:%s" % (native.package_name(), name), {})
    excluded = ["--test-case-exclude=" + ",".join(expected.keys())] if expected else []
    for n in ranks:
        native.sh_test(
            name = "%s_%dranks" % (name, n),
            srcs = ["//tests/support:run_mpi_test.sh"],
            args = [str(n), "$(location :%s_bin)" % name] + args + excluded,
            data = [":" + name + "_bin"] + _RUN_DATA,
            env = env_by_ranks.get(n, {}),
            size = size,
            tags = tags + rank_tags(n, sanitized_ranks),
        )
        expected_failure_tests(
            name = name,
            ranks = n,
            expected = expected,
            expected_failure_ranks = expected_failure_ranks,
            runner = "//tests/support:run_mpi_test.sh",
            runner_args = [str(n), "$(location :%s_bin)" % name],
            case_flag = "--test-case=",
            extra_args = args,
            data = [":" + name + "_bin"] + _RUN_DATA,
            env = env_by_ranks.get(n, {}),
            size = size,
            tags = tags,
        )
