#!/usr/bin/env bash
# Builds the fedmf image (deploy/Dockerfile) for the container tests, once:
# the compose test (tests/containers/run.sh) and the Kubernetes test
# (tests/containers/k8s.sh) both call this, and both run the image it tags,
# localhost/fedmf:latest (what docker-compose.yml's `image: fedmf:latest` and
# deploy/k8s's `image: fedmf:latest` resolve to). A second call with the same
# binaries is a layer-cache hit: nothing is rebuilt.
#   1. a debian:bookworm base from debootstrap (no registry is reachable),
#      imported into podman and kept (and its tarball cached) between runs;
#   2. the binaries: FEDMF_PREBUILT_BIN=DIR takes this build's Release
#      binaries (what ctest passes, so CI compiles the project once), staged
#      in .prebuilt/ for the build context and removed after; without it they
#      are compiled in the image (~20 min on 2 cores when its cache is cold;
#      FEDMF_CONTAINER_FROM_SOURCE=1 forces that);
#   3. podman build.
# Needs root, podman, runc, debootstrap; CONTAINERS_CONF as the tests set it.
# Usage: tests/containers/image.sh     (prints progress on stderr)
set -euo pipefail
main() {
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${FEDMF_CONTAINER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fedmf-containers}
IMAGE=localhost/fedmf:latest
log() { echo "[image] $*" >&2; }
fail() { echo "FAIL: $*" >&2; exit 1; }
STAGED=
LOGDIR=$(mktemp -d /tmp/fedmf-image-XXXXXX)
cleanup() {
  local rc=$?
  [ -z "$STAGED" ] || rm -rf "$ROOT/.prebuilt"
  rm -rf "$LOGDIR"
  exit $rc
}
trap cleanup EXIT
trap 'exit 143' INT TERM

# ---- base image: debootstrap once, then the cached tarball
if ! podman image exists docker.io/library/debian:bookworm; then
  mkdir -p "$CACHE"
  if [ ! -s "$CACHE/bookworm-minbase.tar" ]; then
    MIRROR=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2> /dev/null | head -1)
    [ -n "$MIRROR" ] || MIRROR=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list.d/*.list 2> /dev/null)
    [ -n "$MIRROR" ] || fail "no apt mirror found in /etc/apt/sources.list.d"
    log "debootstrap bookworm from $MIRROR"
    rm -rf "$CACHE/rootfs"
    debootstrap --variant=minbase bookworm "$CACHE/rootfs" "$MIRROR" > "$LOGDIR/debootstrap.log" 2>&1 ||
      { tail -20 "$LOGDIR/debootstrap.log"; fail "debootstrap failed"; }
    tar -C "$CACHE/rootfs" -cf "$CACHE/bookworm-minbase.tar.tmp" .
    mv "$CACHE/bookworm-minbase.tar.tmp" "$CACHE/bookworm-minbase.tar"
    rm -rf "$CACHE/rootfs"
  fi
  log "podman import debian:bookworm"
  podman import "$CACHE/bookworm-minbase.tar" docker.io/library/debian:bookworm > /dev/null
fi

# ---- the binaries
DAEMONS=(fedmf fedmf-server fedmf-party fedmf-device fedmf-aggregator)
if [ -n "${FEDMF_PREBUILT_BIN:-}" ] && [ "${FEDMF_CONTAINER_FROM_SOURCE:-0}" != 1 ]; then
  for b in "${DAEMONS[@]}"; do
    [ -x "$FEDMF_PREBUILT_BIN/$b" ] ||
      fail "$FEDMF_PREBUILT_BIN/$b is missing: build the daemons first (cmake --build build)"
  done
  rm -rf "$ROOT/.prebuilt" && mkdir -p "$ROOT/.prebuilt/bin"
  STAGED=1
  for b in "${DAEMONS[@]}"; do install -s -m 0755 "$FEDMF_PREBUILT_BIN/$b" "$ROOT/.prebuilt/bin/"; done
  "$ROOT/deploy/runtime-packages.sh" "$ROOT/.prebuilt/bin/"* > "$ROOT/.prebuilt/runtime-packages" ||
    fail "could not list the binaries' runtime packages (deploy/runtime-packages.sh)"
  BINARIES=prebuilt
  log "binaries: prebuilt from $FEDMF_PREBUILT_BIN"
else
  BINARIES=source
  log "binaries: compiled in the image (~20 min on 2 cores when its build cache is cold)"
fi

log "podman build $IMAGE"
if ! podman build --layers --build-arg FEDMF_BINARIES=$BINARIES -f "$ROOT/deploy/Dockerfile" \
       -t "$IMAGE" "$ROOT" > "$LOGDIR/build.log" 2>&1; then
  tail -40 "$LOGDIR/build.log" >&2
  fail "podman build failed"
fi
log "built $(podman image inspect -f '{{.Id}}' "$IMAGE" | cut -c1-12)"
}
main "$@"
