"""system_headers: a repository of a Debian package's headers that live
outside the compiler's default search path."""

def system_headers(name, path, library):
    """Declares @`name`//:headers, the headers under `path`, linking -l`library`."""
    native.new_local_repository(
        name = name,
        path = path,
        build_file_content = """
cc_library(
    name = "headers",
    hdrs = glob(["*.h"]),
    includes = ["."],
    linkopts = ["-l%s"],
    visibility = ["//visibility:public"],
)
""" % library,
    )
