#!/usr/bin/env bash
# Prints, one per line, the Debian packages owning every shared library the
# given binaries load: what the image's runtime stage installs
# (deploy/Dockerfile). Runs where the binaries were built (Debian 12 with
# deploy/install-deps.sh's packages): in the image's compile stage, or on the
# host for an image of prebuilt binaries (tests/containers/run.sh), so that
# image needs no toolchain.
#   deploy/runtime-packages.sh BINARY...
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: deploy/runtime-packages.sh BINARY..." >&2; exit 2; }
deps=$(ldd "$@")
if grep -q "not found" <<< "$deps"; then
  grep "not found" <<< "$deps" >&2
  echo "runtime-packages: a library above is missing here: install it (deploy/install-deps.sh)" >&2
  exit 1
fi
# usrmerge: a library ldd finds as /lib/... is owned as /usr/lib/..., or the reverse.
for lib in $(awk '/=> \//{print $3}' <<< "$deps" | sort -u); do
  dpkg -S "$lib" 2> /dev/null || dpkg -S "/usr$lib" 2> /dev/null || dpkg -S "${lib#/usr}" 2> /dev/null ||
    { echo "runtime-packages: no Debian package owns $lib" >&2; exit 1; }
done | cut -d: -f1 | sort -u
