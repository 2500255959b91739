#!/usr/bin/env bash
# Output identity between two builds of the CLI: every capture of sample-traces/ and of
# ../shared/captures (when present) through both, `analyze --format json`, JSON compared by md5.
# Prints the captures whose JSON differs and a count; exits 1 when any differs.
#
# Usage: bench/json_diff.sh OLD_BIN NEW_BIN
# e.g. after a speed change: bench/json_diff.sh /tmp/before/sctp-analyzer target/release/sctp-analyzer
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OLD_BIN NEW_BIN" >&2; exit 2; }
old=$1
new=$2
cd "$(dirname "$0")/.."
dirs=(sample-traces)
[ -d ../shared/captures ] && dirs+=(../shared/captures)
n=0
d=0
while IFS= read -r f; do
  n=$((n + 1))
  a=$(timeout 300 "$old" analyze --format json --no-progress "$f" 2>/dev/null | md5sum)
  b=$(timeout 300 "$new" analyze --format json --no-progress "$f" 2>/dev/null | md5sum)
  if [ "$a" != "$b" ]; then
    d=$((d + 1))
    echo "DIFF $f"
  fi
done < <(find "${dirs[@]}" -type f \( -name '*.pcap' -o -name '*.pcapng' -o -name '*.cap' \
  -o -name '*.gz' -o -name '*.zst' -o -name '*.lz4' -o -name '*.pcap*' -o -name '*.erf' \) | sort -u)
echo "compared $n captures, JSON differs on $d"
[ "$d" -eq 0 ]
