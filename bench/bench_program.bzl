"""bench_program: a benchmark that runs flowio beside MPICH's MPI-IO;
unmodified_program: a plain C program that knows nothing of flowio."""

load("@rules_cc//cc:defs.bzl", "cc_binary")

def bench_program(name, srcs = None, deps = []):
    """A cc_binary `name` from `name`.cc (or `srcs`) with what every
    flowio-against-MPICH benchmark links: bench_support, the flowio API and
    MPI, besides `deps`."""
    cc_binary(
        name = name,
        srcs = srcs if srcs else [name + ".cc"],
        deps = [
            ":bench_support",
            "//api:flowio",
            "//third_party/system:mpi",
        ] + deps,
    )

def unmodified_program(name, deps, visibility = None):
    """A cc_binary `name` from `name`.c in C11: an MPI-IO program as a user
    would write it (no flowio header), which a script runs on MPICH's
    MPI-IO and again with flowio's layer preloaded."""
    cc_binary(
        name = name,
        srcs = [name + ".c"],
        copts = ["-std=c11"],
        visibility = visibility,
        deps = deps,
    )
