#!/usr/bin/env bash
# Builds the fuzz targets (cargo-fuzz, libFuzzer + AddressSanitizer) and runs each for a bounded
# time from generated seeds; fails on the first crash, leak, timeout or out-of-memory, whose input
# libFuzzer leaves in fuzz/artifacts/<target>/ (turn it into a regression test, see README.md).
# Usage: fuzz/run.sh [SECONDS per target, default 60] [TARGET...]
# The stable toolchain runs cargo-fuzz's nightly flags with RUSTC_BOOTSTRAP=1.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(reader link_ip sctp_chunks analyze)
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
export RUSTC_BOOTSTRAP=1
python3 fuzz/seeds.py
cd fuzz
# -O -a: release build with debug assertions (overflow checks), the analyzer without polars.
for t in "${targets[@]}"; do
  cargo fuzz build -O -a "$t"
done
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  echo "== fuzz $t for ${secs}s"
  # -rss_limit_mb: any input that makes the analyzer use 2 GiB is a bug (state must be bounded);
  # -timeout: a single input taking 10 s is a hang. The log's last lines carry the stats.
  nice -n 10 cargo fuzz run -O -a "$t" "corpus/$t" "seeds/$t" -- \
    -max_total_time="$secs" -max_len=131072 -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 2>"$t.log" || { tail -n 60 "$t.log"; echo "FAIL fuzz target $t"; exit 1; }
  grep -E "^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)|^#[0-9]+.*DONE" "$t.log" || true
  echo "corpus $t: $(ls "corpus/$t" | wc -l) inputs, $(du -sk "corpus/$t" | cut -f1) KiB"
  rm -f "$t.log"
done
