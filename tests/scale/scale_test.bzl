"""scale_test: a doctest program of the scale tier over flowio's API."""

load("//tests/support:mpi_test.bzl", "mpi_test")

def scale_test(name, ranks, sparse = False, deps = [], **kwargs):
    """An mpi_test `name` from `name`.cc, tagged "scale", linking what the
    tier's API tests all use: the flowio API, scratch paths and world.h;
    `sparse` adds the sparse-file comparison (sparse_file.h), `deps` what
    else it needs. Other arguments (size, sanitized_ranks) go to
    mpi_test."""
    mpi_test(
        name = name,
        srcs = [name + ".cc"],
        ranks = ranks,
        tags = ["scale"],
        deps = (["//tests/support:sparse_file"] if sparse else []) + [
            "//api:flowio",
            "//tests/api:test_paths",
            "//tests/support:world",
        ] + deps,
        **kwargs
    )
