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
    """The tags of a multi-rank test run on `n` ranks: "mpi", "ranks<n>"
    (tools/test.sh runs one-process tests side by side), and
    "not_sanitized" unless `n` is in sanitized_ranks."""
    return ["mpi", "ranks%d" % n] + ([] if n in sanitized_ranks else ["not_sanitized"])

def mpi_script_tests(name, script, args = [], data = [], ranks = [1, 2, 4], env_by_ranks = {}, size = "medium", tags = [], sanitized_ranks = SANITIZED_RANKS):
    """A test `name`_<N>ranks for each N in `ranks`: `script` run with N,
    then `args`.

    The script launches the ranks itself (mpi_runner_setup.sh, which comes
    with the runfiles, says how). env_by_ranks maps a rank count to extra
    environment variables for that test. Only the rank counts in
    sanitized_ranks run again under --config=asan.
    """
    for n in ranks:
        native.sh_test(
            name = "%s_%dranks" % (name, n),
            srcs = [script],
            args = [str(n)] + args,
            data = data + _RUN_DATA,
            env = env_by_ranks.get(n, {}),
            size = size,
            tags = tags + rank_tags(n, sanitized_ranks),
        )

def expected_failure_tests(name, ranks, expected, expected_failure_ranks, runner, runner_args, case_flag, data, size, tags, extra_args = [], env_by_ranks = {}):
    """One test `name`_xfail_<case>_<N>ranks per case of `expected` and N
    of `ranks` (of expected_failure_ranks, when given, only those).

    `expected` maps a case to the work it waits for (expected_failures.bzl).
    Each test runs `runner` with N, runner_args, case_flag + case and
    extra_args through expected_failure.sh, which passes while the case
    fails; `data` and the runner's support files are its runfiles.
    """
    for n in ranks:
        if expected_failure_ranks != None and n not in expected_failure_ranks:
            continue
        for case, reason in expected.items():
            native.sh_test(
                name = "%s_xfail_%s_%dranks" % (name, case.replace(".", "_"), n),
                srcs = ["//tests/support:expected_failure.sh"],
                args = [
                    "'%s'" % reason.replace("'", ""),
                    "$(location %s)" % runner,
                    str(n),
                ] + runner_args + [case_flag + case] + extra_args,
                data = data + [runner] + _RUN_DATA,
                env = env_by_ranks.get(n, {}),
                size = size,
                tags = tags + ["mpi", "expected_failure"],
            )

def runner_tests(name, runner, runner_args, case_flag, skip_flag, data, ranks, expected_failure_ranks, size, tags, sanitized_ranks, extra_args = [], env_by_ranks = {}):
    """The tests of `name` (mpi_script_tests) and of its expected failures.

    `runner` runs with N, runner_args, extra_args and, when
    expected_failures.bzl lists cases of `name`, skip_flag + those cases;
    each listed case runs apart (expected_failure_tests, case_flag + case).
    """
    expected = EXPECTED_FAILURES.get("//%s:%s" % (native.package_name(), name), {})
    skipped = [skip_flag + ",".join(expected.keys())] if expected else []
    mpi_script_tests(
        name = name,
        script = runner,
        args = runner_args + extra_args + skipped,
        data = data,
        ranks = ranks,
        env_by_ranks = env_by_ranks,
        size = size,
        tags = tags,
        sanitized_ranks = sanitized_ranks,
    )
    expected_failure_tests(
        name = name,
        ranks = ranks,
        expected = expected,
        expected_failure_ranks = expected_failure_ranks,
        runner = runner,
        runner_args = runner_args,
        case_flag = case_flag,
        extra_args = extra_args,
        data = data,
        env_by_ranks = env_by_ranks,
        size = size,
        tags = tags,
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
    runner_tests(
        name = name,
        runner = "//tests/support:run_mpi_test.sh",
        runner_args = ["$(location :%s_bin)" % name],
        case_flag = "--test-case=",
        skip_flag = "--test-case-exclude=",
        data = [":" + name + "_bin"],
        ranks = ranks,
        expected_failure_ranks = expected_failure_ranks,
        size = size,
        tags = tags,
        sanitized_ranks = sanitized_ranks,
        extra_args = args,
        env_by_ranks = env_by_ranks,
    )
