#!/usr/bin/env bash
# Fails when a C++ source does not follow .clang-format (Google style, 100
# columns), naming each file and the command that fixes it. Run from anywhere;
# checks the tracked sources of a git checkout, or every .h/.cc under the
# source folders of an unpacked tree.
set -euo pipefail
cd "$(dirname "$0")/.."
FORMAT=${CLANG_FORMAT:-clang-format}
if ! command -v "$FORMAT" > /dev/null; then
  echo "check-format: '$FORMAT' not found; install it with deploy/install-deps.sh --tests" >&2
  exit 2
fi
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.h' '*.cc' '*.cpp')
else
  mapfile -t files < <(find common server aggregator party client-device tools tests \
    -name '*.h' -o -name '*.cc' -o -name '*.cpp' | sort)
fi
bad=()
for f in "${files[@]}"; do
  "$FORMAT" --dry-run --Werror "$f" > /dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -ne 0 ]; then
  echo "check-format: ${#bad[@]} of ${#files[@]} files do not follow .clang-format:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "fix: $FORMAT -i ${bad[*]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files follow .clang-format"
