"""unit_test: a single-process doctest test that may run under --config=asan."""

load("@rules_cc//cc:defs.bzl", "cc_test")

# The tests initialize MPI (through doctest_main), whose own allocations
# LeakSanitizer would report under --config=asan; the variable is ignored
# otherwise.
_LSAN_OPTIONS = "suppressions=$(location //tests/support:lsan_suppressions.txt):fast_unwind_on_malloc=0"

def unit_test(name, deps = [], size = "small", src = None, args = [], data = []):
    """Builds and runs `name`.cc (or `src`) with the doctest main that initializes MPI.

    `args` go to doctest, e.g. a filter of test cases, so that one source
    may run as several tests that each fit the deadline; `data` are files
    the test reads.
    """
    cc_test(
        name = name,
        srcs = [src if src else name + ".cc"],
        args = args,
        data = data + ["//tests/support:lsan_suppressions.txt"],
        env = {"LSAN_OPTIONS": _LSAN_OPTIONS},
        size = size,
        deps = deps + ["//tests/support:doctest_main"],
    )
