#!/usr/bin/env bash
# The server's layering rule (docs/architecture.md): a protocol's folder
# under server/ (fmf, lfl, hua, ...) never includes another protocol's
# headers, and the shared layer (server/*.h, server/*.cc) names protocols
# only in the wiring files: server_main.cc (builds the runners),
# server_config.* (reads each protocol's options) and server_metrics.*
# (exports the cross-silo counters). Prints every
# offending line with the fix and exits 1; exits 0 when the rule holds.
#   check-server-includes.sh [ROOT]   check ROOT (default: this checkout)
#   check-server-includes.sh --self-test   show the check fails on a violation
set -euo pipefail

check() {
  local root=$1 bad=0 dir proto line
  [ -d "$root/server" ] || { echo "check-server-includes: no server/ under $root" >&2; return 2; }
  mapfile -t protocols < <(find "$root/server" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort)
  for proto in "${protocols[@]}"; do
    dir="$root/server/$proto"
    while IFS= read -r line; do
      [ -n "$line" ] || continue
      echo "  $line" >&2
      bad=1
    done < <(grep -rnE '^\s*#\s*include\s+"server/[^/"]+/' --include='*.h' --include='*.cc' "$dir" |
      grep -vE "#\s*include\s+\"server/$proto/" | sed "s|^$root/||" || true)
  done
  if [ $bad -ne 0 ]; then
    echo "check-server-includes: the lines above make one protocol's server code include another's;" \
      "move what both need to server/ (the shared layer) or common/" >&2
  fi
  local shared=0
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    echo "  $line" >&2
    shared=1
  done < <(grep -nE '^\s*#\s*include\s+"server/[^/"]+/' "$root"/server/*.h "$root"/server/*.cc 2>/dev/null |
    grep -vE "^$root/server/(server_main\.cc|server_config\.(h|cc)|server_metrics\.(h|cc)):" |
    sed "s|^$root/||" || true)
  if [ $shared -ne 0 ]; then
    echo "check-server-includes: the lines above make the shared layer name a protocol; reach it" \
      "through server/job_runner.h and wire it in server/server_main.cc" >&2
  fi
  if [ $bad -ne 0 ] || [ $shared -ne 0 ]; then return 1; fi
  echo "check-server-includes: ${#protocols[@]} protocol folders (${protocols[*]}) include only their own and shared headers"
}

if [ "${1:-}" = "--self-test" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/server/alpha" "$tmp/server/beta"
  printf '#include "server/job_runner.h"\n#include "server/alpha/a.h"\n' > "$tmp/server/alpha/a.cc"
  printf '#include "common/base/status_macros.h"\n' > "$tmp/server/beta/b.h"
  printf '#include "server/alpha/a.h"\n' > "$tmp/server/server_main.cc"
  check "$tmp" > /dev/null || { echo "self-test: a clean tree was refused" >&2; exit 1; }
  printf '#include "server/alpha/a.h"\n' >> "$tmp/server/beta/b.h"
  if check "$tmp" 2> "$tmp/err" > /dev/null; then
    echo "self-test: beta including alpha was not caught" >&2
    exit 1
  fi
  grep -q 'server/beta/b.h:2:#include "server/alpha/a.h"' "$tmp/err" ||
    { echo "self-test: the offending line was not named:" >&2; cat "$tmp/err" >&2; exit 1; }
  sed -i '$d' "$tmp/server/beta/b.h"
  printf '#include "server/beta/b.h"\n' > "$tmp/server/job_directory.cc"
  if check "$tmp" 2> /dev/null > /dev/null; then
    echo "self-test: the shared layer including a protocol was not caught" >&2
    exit 1
  fi
  echo "check-server-includes: self-test passed (both violations caught, a clean tree passes)"
  exit 0
fi

check "${1:-$(cd "$(dirname "$0")/.." && pwd)}"
