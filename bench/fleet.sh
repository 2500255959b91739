#!/usr/bin/env bash
# Fleet benchmark (issue 18 part 4): captures per second of the Ray fleet job
# (`sctp_analyzer.fleet.run`) on a local cluster of one and of two worker nodes, against the
# CLI's `analyze --jobs 1` and `--jobs 2` on the same captures, all writing the same
# hive-partitioned Parquet tables and summary (`--format parquet --out DIR`).
#
# The captures: N (default 200) of SIZE_MB each (default 0.5), made by the analyzer's
# make_big_capture from the four lab traces of compare.sh's batch in turn. Release builds of the
# CLI and of the Python wheel (maturin --release) into a venv under target/; PROFILE=dev uses the
# dev profile for both (the builds the tests already made: no release build of polars).
# Usage: [PROFILE=dev] bench/fleet.sh [N] [SIZE_MB]     writes bench/out/result_fleet_N.md
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
size=${2:-0.5}
target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
profile=${PROFILE:-release}
case $profile in
  release) cargo_flag=--release; bin_dir="$target/release" ;;
  dev) cargo_flag=; bin_dir="$target/debug" ;;
  *) echo "PROFILE is release or dev" >&2; exit 2 ;;
esac
venv="$target/py-venv-bench"
out=bench/out
mkdir -p "$out"
cargo build $cargo_flag --workspace --bin sctp-analyzer --example make_big_capture
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r python/requirements.txt
CARGO_TARGET_DIR="$target" "$venv/bin/maturin" build -q --profile "$profile" \
  --manifest-path python/Cargo.toml --interpreter "$venv/bin/python" --out "$target/wheels-$profile"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
  "$target/wheels-$profile"/sctp_analyzer-*.whl

dir="$out/fleet_${n}x${size}mb"
if [ ! -d "$dir" ]; then
  mkdir -p "$dir"
  srcs=(sample-traces/cut_p20_sack40_sender.pcap sample-traces/sparse_sack200_sender.pcap
    sample-traces/spur_pmr1_rtomin30_sender.pcap sample-traces/spike_p20_rtomin100_sender.pcap)
  for i in $(seq -w 1 "$n"); do
    "$bin_dir/examples/make_big_capture" "${srcs[$((10#$i % 4))]}" "$dir/c$i.pcap" "$size" 2>/dev/null
  done
fi
cat "$dir"/*.pcap >/dev/null
mb=$(du -sm "$dir" | cut -f1)

export RAY_USAGE_STATS_ENABLED=0 RAY_AUTH_MODE=disabled
ray="$venv/bin/ray"
work=$(mktemp -d /tmp/fleet-bench.XXXX)
trap '"$ray" stop --force >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
secs() { python3 -c "import sys; print(f'{float(sys.argv[1]):.2f}')" "$1"; }

results=()
for workers in 1 2; do
  "$ray" stop --force >/dev/null 2>&1 || true
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$ray" start --head --port="$port" --node-ip-address=127.0.0.1 --num-cpus=0 \
    --include-dashboard=false --disable-usage-stats --temp-dir="$work/ray" >/dev/null
  for _ in $(seq "$workers"); do
    "$ray" start --address="127.0.0.1:$port" --node-ip-address=127.0.0.1 --num-cpus=1 >/dev/null
  done
  rm -rf "$work/fleet"
  t=$("$venv/bin/python" - "$dir" "$work/fleet" "127.0.0.1:$port" <<'EOF'
import sys, time
from sctp_analyzer import fleet
r = fleet.run(sys.argv[1], sys.argv[2], address=sys.argv[3], node_ip_address="127.0.0.1")
assert not r.failed and not r.skipped, r
print(r.seconds)
EOF
)
  results+=("| fleet on Ray, $workers worker node(s) | $(secs "$t") | $(python3 -c "print(f'{$n/$t:.1f}')") |")
  "$ray" stop --force >/dev/null 2>&1
done
for jobs in 1 2; do
  rm -rf "$work/cli"
  start=$(date +%s.%N)
  "$bin_dir/sctp-analyzer" analyze --format parquet --no-progress --jobs "$jobs" --out "$work/cli" "$dir" 2>/dev/null
  t=$(python3 -c "import time,sys; print(time.time()-float(sys.argv[1]))" "$start")
  results+=("| CLI \`analyze --jobs $jobs\` | $(secs "$t") | $(python3 -c "print(f'{$n/$t:.1f}')") |")
done
{
  echo "$n captures of $size MB ($mb MB in all), $profile builds, Parquet tables and summary written; one run each"
  echo
  echo "| how | wall s | captures/s |"
  echo "|---|---:|---:|"
  printf '%s\n' "${results[@]}"
} | tee "$out/result_fleet_$n.md"
