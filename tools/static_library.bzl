"""static_library: one installable .a holding a target and all it links.

Bazel builds one archive per cc_library; a user outside Bazel wants one
archive to link. The rule merges the archives of `deps` and of every
cc_library they depend on, transitively, with `ar -M` (MRI script):
`addlib` copies every member, so two objects with the same basename in
different packages both survive, which extracting the objects into one
folder would not guarantee.

Libraries without an archive (//third_party/system targets carry only
linkopts) contribute nothing to the archive; their link flags are written,
one per line, to `<name>.link_flags` in the output group `link_flags`, so
that tools/install.sh can put them in the pkg-config file's Libs.private.

Written for Bazel 4.2.3 (CcInfo.linking_context.linker_inputs).
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

def _archive_of(library):
    # Position-independent objects first: Debian's compilers build PIE
    # executables by default, and the same archive may go into a shared
    # library the user builds.
    return library.pic_static_library or library.static_library

def _static_library_impl(ctx):
    archives = []
    link_flags = []
    linker_inputs = depset(transitive = [
        dep[CcInfo].linking_context.linker_inputs
        for dep in ctx.attr.deps
    ]).to_list()
    for linker_input in linker_inputs:
        for flag in linker_input.user_link_flags:
            if flag not in link_flags:
                link_flags.append(flag)
        for library in linker_input.libraries:
            archive = _archive_of(library)
            if archive and archive not in archives:
                archives.append(archive)

    # MRI scripts cannot quote file names; Bazel's output paths hold no
    # spaces.
    output = ctx.actions.declare_file(ctx.label.name)
    script = ctx.actions.declare_file(ctx.label.name + ".mri")
    ctx.actions.write(
        output = script,
        content = "\n".join(
            ["create " + output.path] +
            ["addlib " + archive.path for archive in archives] +
            ["save", "end", ""],
        ),
    )

    cc_toolchain = find_cpp_toolchain(ctx)
    ctx.actions.run_shell(
        inputs = depset(archives + [script], transitive = [cc_toolchain.all_files]),
        outputs = [output],
        # The script names the output; `save` writes the symbol index too.
        command = '"$1" -M < "$2"',
        arguments = [cc_toolchain.ar_executable, script.path],
        mnemonic = "MergeStaticLibrary",
        progress_message = "Merging %d archives into %s" % (len(archives), output.short_path),
    )

    flags_file = ctx.actions.declare_file(ctx.label.name + ".link_flags")
    ctx.actions.write(output = flags_file, content = "".join([flag + "\n" for flag in link_flags]))

    return [
        DefaultInfo(files = depset([output])),
        OutputGroupInfo(link_flags = depset([flags_file])),
    ]

static_library = rule(
    implementation = _static_library_impl,
    doc = "Merges the static archives of deps and their transitive cc deps into one .a named `name`.",
    attrs = {
        "deps": attr.label_list(providers = [CcInfo]),
        "_cc_toolchain": attr.label(
            default = Label("@bazel_tools//tools/cpp:current_cc_toolchain"),
        ),
    },
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
    fragments = ["cpp"],
)
