#!/usr/bin/env bash
# Installs the Debian 12 packages fedmf needs, only those that are missing (so
# it is fast and offline-safe when everything is present). Run as root (or
# with sudo available).
#   deploy/install-deps.sh          what building the product and `fedmf demo` need
#   deploy/install-deps.sh --tests  that plus the test suite's toolchain (tests/run-all.sh)
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libeigen3-dev libspdlog-dev libssl-dev
  libcli11-dev nlohmann-json3-dev libsqlite3-dev libyaml-cpp-dev libcpp-httplib-dev
  libsodium-dev  # X25519, Ed25519 and ristretto255 (common/crypto, common/psi)
  lld  # the linker CMake picks when present: 4-5x faster links than GNU ld
)
TEST_PACKAGES=(
  libgtest-dev libgmock-dev libbenchmark-dev
  python3  # the shell tests' JSON and DOM checks
  # The fuzz targets (tests/fuzz): clang with libFuzzer and the sanitizer runtimes.
  clang libclang-rt-14-dev
  clang-format  # tests/check-format.sh: the sources follow .clang-format
  # The container test (tests/containers): podman as the Docker engine.
  podman runc docker-compose debootstrap curl
  golang-github-containernetworking-plugin-dnsname  # container names resolve in compose networks (CNI)
  # The Kubernetes test (tests/containers/k8s.sh): pods need catatonit for
  # their infra container; the manifests' schema check and podman-kube.py use
  # Debian's python3 modules; cert-secrets.sh checks certificates with openssl.
  catatonit python3-yaml python3-kubernetes openssl
  chromium  # the dashboard's browser test (ctest label browser)
)
# kubectl for the Kubernetes test: Debian's kubernetes-client, unless some
# kubectl is installed already (e.g. a cloud SDK's package, which owns
# /usr/bin/kubectl too: dpkg would refuse to overwrite it).
command -v kubectl > /dev/null || TEST_PACKAGES+=(kubernetes-client)
case "${1:-}" in
  "") ;;
  --tests) PACKAGES+=("${TEST_PACKAGES[@]}") ;;
  *) echo "install-deps: unknown argument '$1' (use no argument, or --tests)" >&2; exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
