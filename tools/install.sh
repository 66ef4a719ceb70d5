#!/bin/bash
# Installs flowio under a prefix: tools/install.sh PREFIX
#   PREFIX/include/flowio/*.h          the public C++ API
#   PREFIX/lib/libflowio.{so,a}        flowio and everything it links
#   PREFIX/lib/libflowio_mpiio.{so,a}  the MPI-IO layer (MPI_File_* on flowio),
#                                      when the package //api/mpiio exists
#   PREFIX/lib/pkgconfig/flowio.pc, flowio-mpiio.pc
# Safe to run again: every file is replaced, nothing else under PREFIX is
# touched. Needs the Debian packages of tools/install_packages.sh.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 PREFIX" >&2
  exit 2
fi
mkdir -p "$1"
prefix=$(realpath "$1")
cd "$(dirname "$0")/.."

# The installable libraries, by Bazel label; each installs under the base
# name of its target. //api's live under dist/ (see api/BUILD).
shared=(//api:dist/libflowio.so)
static=(//api:dist/libflowio.a)
if [ -f api/mpiio/BUILD ]; then
  shared+=(//api/mpiio:libflowio_mpiio.so)
  static+=(//api/mpiio:libflowio_mpiio.a)
fi

# The link_flags output group of a static_library holds the system
# libraries its archive needs, for Libs.private (tools/static_library.bzl).
bazel build -c opt --output_groups=+link_flags "${shared[@]}" "${static[@]}"
bin=$(bazel info -c opt bazel-bin)
output_of() {
  local label=${1#//}
  echo "$bin/${label/://}"
}

install -d "$prefix/include/flowio" "$prefix/lib/pkgconfig"
headers=(api/include/flowio/*.h)
install -m 644 "${headers[@]}" "$prefix/include/flowio/"
echo "installed headers: $prefix/include/flowio/{$(basename -a "${headers[@]}" | paste -sd,)}"
for label in "${shared[@]}"; do
  install -m 755 "$(output_of "$label")" "$prefix/lib/"
  echo "installed library: $prefix/lib/$(basename "$(output_of "$label")")"
done
for label in "${static[@]}"; do
  install -m 644 "$(output_of "$label")" "$prefix/lib/"
  echo "installed library: $prefix/lib/$(basename "$(output_of "$label")")"
done

# write_pc MODULE LIBRARY STATIC_LABEL DESCRIPTION CFLAGS [PRIVATE...]:
# writes PREFIX/lib/pkgconfig/MODULE.pc for -lLIBRARY. Programs compile with
# mpicxx or mpicc, which supply MPI's own flags; Libs.private lists what the
# static archive needs besides (pkg-config --static): the archive's system
# libraries, then PRIVATE.
write_pc() {
  local module=$1 library=$2 static_label=$3 description=$4 cflags=$5
  shift 5
  local file="$prefix/lib/pkgconfig/$module.pc" private
  private=$(paste -sd' ' "$(output_of "$static_label").link_flags")
  if [ $# -gt 0 ]; then private+=" $*"; fi
  cat >"$file" <<EOF
# Written by flowio's tools/install.sh from commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown).
prefix=$prefix
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: $module
Description: $description
Version: 0.0.0
${cflags:+Cflags: $cflags
}Libs: -L\${libdir} -Wl,-rpath,\${libdir} -l$library
Libs.private: $private
EOF
  echo "installed pkg-config file: $file"
}

# The public headers use C++20 (std::source_location in error.h), so the
# standard belongs to the flags every user needs.
write_pc flowio flowio "${static[0]}" \
  "Asynchronous parallel file I/O for MPI programs (C++ API)" "-I\${includedir} -std=c++20"
# The layer serves unmodified C and C++ MPI programs through mpi.h: no
# flowio headers, no language standard. A C program links with mpicc (gcc),
# which does not add the C++ runtime the static archive needs.
if [ ${#static[@]} -gt 1 ]; then
  write_pc flowio-mpiio flowio_mpiio "${static[1]}" "MPI-IO (MPI_File_*) implemented on flowio" "" \
    -lstdc++ -lm
fi
