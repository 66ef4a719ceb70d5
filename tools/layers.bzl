"""What the layers' Bazel packages share (the layering itself is checked
by tools/check_layering.sh)."""

# Who may depend on a service layer (//io, //exchange, //sync): the layers
# above it, and the tests and benchmarks. The services are private to
# flowio.
SERVICE_USERS = [
    "//api:__subpackages__",
    "//bench:__subpackages__",
    "//runtime:__subpackages__",
    "//tests:__subpackages__",
]
