#!/usr/bin/env bash
# Where the time of the 1 GB SCTP JSON pass goes, issue by issue: builds this checkout's HEAD
# as it is and with some analyses not fed (bench/attribute.py: no-15, no-13, ...), optionally
# an older commit too (BASE=65c13c6, the build before issue 13), and times them all
# alternately on the same capture (bench/timing.py), so that each issue's own cost is the ratio
# of two builds that differ by that issue's analyses only.
#
# Usage: bench/attribute.sh [SIZE_MB] [VARIANT...]
#   e.g. BASE=65c13c6 ROUNDS=21 bench/attribute.sh 1000 full no-15 no-13 no-13-15
# Default variants: full no-15 no-13 no-13-15 no-hol no-streams no-stalls. SIZE_MB default 1000.
# Builds in git worktrees under a temporary folder (removed at the end), binaries and the table
# in bench/out/attribute/ (result_SIZE.md). CARGO_TARGET_DIR is shared by the builds (only the
# analyzer crate is rebuilt for each).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/big_capture.sh
size=${1:-1000}
shift || true
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(full no-15 no-13 no-13-15 no-hol no-streams no-stalls)
rounds=${ROUNDS:-15}
target=${CARGO_TARGET_DIR:-$PWD/target}
out=bench/out/attribute
mkdir -p "$out"
rel=$target/release
cargo build --release --example make_big_capture
tmp=$(mktemp -d)
trap 'for w in "$tmp"/*; do git worktree remove --force "$w" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
tools=()
build() { # name rev variant: adds the build to `tools`
  local name=$1 rev=$2 variant=$3
  git worktree add --quiet --detach "$tmp/$name" "$rev"
  python3 bench/attribute.py "$tmp/$name" "$variant"
  (cd "$tmp/$name" && CARGO_TARGET_DIR=$target cargo build --quiet --release --bin sctp-analyzer)
  cp "$rel/sctp-analyzer" "$out/sctp-analyzer-$name"
  tools+=("$name=$out/sctp-analyzer-$name analyze --format json --no-progress $big")
}
big_capture "$rel/examples/make_big_capture" bench/out sctp "$size"
[ -z "${BASE:-}" ] || build "base-$BASE" "$BASE" full
for v in "${variants[@]}"; do
  build "$v" HEAD "$v"
done
python3 bench/timing.py "$big" "$packets" "$rounds" "$out/result_${size}.md" "${tools[@]}"
