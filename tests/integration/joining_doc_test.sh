#!/usr/bin/env bash
# docs/joining-a-federation.md, section 0, as a user would run it: the fenced
# block between <!-- walkthrough:begin --> and <!-- walkthrough:end --> runs
# as written (bash -euo pipefail, the built binaries first on PATH, from a
# copy of the checkout's deploy/examples), and every `#>` line it shows must
# be a line of what it printed.
#   joining_doc_test.sh BIN_DIR
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(cd "$1" && pwd)
DOC="$ROOT/docs/joining-a-federation.md"
WORK=$(mktemp -d /tmp/fedmf-joining-doc-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

block=$(awk '/<!-- walkthrough:begin -->/{on=1; next} /<!-- walkthrough:end -->/{on=0}
             on && !/^```/' "$DOC")
[ -n "$block" ] || fail "no walkthrough block in $DOC"
grep -q '^fedmf ' <<< "$block" || fail "the walkthrough runs no fedmf command"
mkdir -p "$WORK/deploy"
cp -r "$ROOT/deploy/examples" "$WORK/deploy/"
printf 'set -euo pipefail\n%s\n' "$block" > "$WORK/walkthrough.sh"
out=$(cd "$WORK" && PATH="$BIN:$PATH" bash "$WORK/walkthrough.sh" 2> "$WORK/stderr") ||
  fail "the walkthrough failed: $(tail -n 20 "$WORK/stderr")"
echo "$out"
expected=0
while IFS= read -r line; do
  want=${line#\#> }
  expected=$((expected + 1))
  grep -qxF -- "$want" <<< "$out" || fail "the doc shows '$want'; the commands printed:
$out"
done < <(grep '^#> ' <<< "$block")
[ "$expected" -ge 3 ] || fail "only $expected expected lines in the walkthrough"
# The example files really are partners' own files: string ids, different
# items and row orders (so the alignment above is not by position).
cd "$WORK/deploy/examples/partners"
[ "$(sed -n 2p bank-a.csv | cut -d, -f2)" != "$(sed -n 2p shop-b.csv | cut -d, -f2)" ] ||
  fail "example files start with the same item"
grep -q '@example.org' bank-a-offers.csv || fail "VFL example users are not e-mail ids"
echo "PASS: the walkthrough's $expected expected lines"
