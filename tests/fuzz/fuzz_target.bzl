"""fuzz_target: a libFuzzer target that also replays its corpus as a test."""

load("@rules_cc//cc:defs.bzl", "cc_binary")

def fuzz_target(name, deps):
    """Builds `name`_fuzzer from `name`_fuzz.cc and the test `name`_corpus_test.

    With --config=fuzz (clang, --define=flowio_fuzzer=libfuzzer) the binary
    is a libFuzzer fuzzer; otherwise it links corpus_driver.cc, and the
    test runs it once over every file in corpus/`name`/.
    """
    cc_binary(
        name = name + "_fuzzer",
        srcs = [name + "_fuzz.cc"],
        testonly = True,
        deps = deps + [":fuzz_input"] + select({
            ":libfuzzer": [],
            "//conditions:default": [":corpus_driver"],
        }),
        linkopts = select({
            ":libfuzzer": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
    )
    native.sh_test(
        name = name + "_corpus_test",
        srcs = ["run_corpus.sh"],
        args = ["$(location :%s_fuzzer)" % name, "tests/fuzz/corpus/" + name],
        data = [
            ":%s_fuzzer" % name,
            "//tests/support:lsan_suppressions.txt",
        ] + native.glob(["corpus/%s/*" % name]),
        # Under --config=asan: MPI's transports leak at exit (as in every
        # MPI test, tests/support/mpi_runner_setup.sh).
        env = {"LSAN_OPTIONS": "suppressions=$(rootpath //tests/support:lsan_suppressions.txt)"},
        size = "small",
    )
