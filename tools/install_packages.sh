#!/bin/bash
# Installs the Debian packages flowio needs, if any is missing.
set -euo pipefail
packages=(mpich libmpich-dev libtbb-dev liburing-dev liblzo2-dev doctest-dev nlohmann-json3-dev
  libcli11-dev bazel-bootstrap python3-matplotlib libhdf5-mpich-dev hdf5-tools strace)
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi
