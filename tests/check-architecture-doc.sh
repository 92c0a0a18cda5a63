#!/usr/bin/env bash
# Keeps docs/architecture.md and its diagram true: every folder they name
# (a path ending in "/" in backquotes in the page, or a text path ending in
# "/" in the SVG) must exist in the checkout. Exits 1 naming the missing ones.
#   check-architecture-doc.sh [ROOT]        check ROOT (default: this checkout)
#   check-architecture-doc.sh --self-test   show the check fails on a missing folder
set -euo pipefail

check() {
  local root=$1 doc=$1/docs/architecture.md svg=$1/docs/architecture.svg
  [ -f "$doc" ] || { echo "check-architecture-doc: $doc is missing" >&2; return 1; }
  [ -f "$svg" ] || { echo "check-architecture-doc: $svg is missing" >&2; return 1; }
  mapfile -t folders < <({
    grep -oE '`[A-Za-z0-9_.<>-]+(/[A-Za-z0-9_.<>-]+)*/`' "$doc" | tr -d '`'
    sed -n 's/<[^>]*>/ /gp' "$svg" | grep -oE '[a-z0-9_-]+(/[a-z0-9_-]+)*/' || true
  } | grep -v '<' | sort -u)
  [ ${#folders[@]} -gt 0 ] || { echo "check-architecture-doc: no folder named (parser broken?)" >&2; return 1; }
  local missing=()
  for f in "${folders[@]}"; do [ -d "$root/$f" ] || missing+=("$f"); done
  if [ ${#missing[@]} -ne 0 ]; then
    echo "check-architecture-doc: docs/architecture.md or .svg names folders that do not exist:" >&2
    printf '  %s\n' "${missing[@]}" >&2
    echo "fix the page (and the diagram) to match the tree" >&2
    return 1
  fi
  echo "check-architecture-doc: all ${#folders[@]} folders named exist"
}

if [ "${1:-}" = "--self-test" ]; then
  root=$(cd "$(dirname "$0")/.." && pwd)
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/docs" "$tmp/server/fmf"
  printf 'see `server/fmf/` and `server/`\n' > "$tmp/docs/architecture.md"
  printf '<svg><text>server/fmf/</text></svg>\n' > "$tmp/docs/architecture.svg"
  check "$tmp" > /dev/null || { echo "self-test: a true page was refused" >&2; exit 1; }
  printf '<svg><text>server/gone/</text></svg>\n' > "$tmp/docs/architecture.svg"
  if check "$tmp" > /dev/null 2>&1; then echo "self-test: a missing folder in the SVG passed" >&2; exit 1; fi
  printf '<svg></svg>\n' > "$tmp/docs/architecture.svg"
  printf 'see `common/gone/`\n' >> "$tmp/docs/architecture.md"
  if check "$tmp" > /dev/null 2>&1; then echo "self-test: a missing folder in the page passed" >&2; exit 1; fi
  echo "check-architecture-doc: self-test passed"
  exit 0
fi

check "${1:-$(cd "$(dirname "$0")/.." && pwd)}"
