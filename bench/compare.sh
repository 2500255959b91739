#!/usr/bin/env bash
# Speed benchmark: our CLI against tshark on the same large capture, run alternately.
# Builds a capture of SIZE_MB (default 200) by repeating a sample trace with shifted times, tags
# and ports, then times each tool with hyperfine and measures peak RSS with /usr/bin/time -v.
# Usage: bench/compare.sh [SIZE_MB]   (needs tshark, hyperfine, GNU time; apt-get install them)
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-200}
src=${SRC:-sample-traces/cut_p20_sack40_sender.pcap}
out=bench/out
mkdir -p "$out"
big="$out/sctp_${size}mb.pcap"
cargo build --release --workspace --bin sctp-analyzer --example make_big_capture
[ -s "$big" ] || target/release/examples/make_big_capture "$src" "$big" "$size"
bin=target/release/sctp-analyzer
packets=$(capinfos -Mc "$big" 2>/dev/null | awk -F: '/Number of packets/{gsub(/ /,"",$2); print $2}')
bytes=$(stat -c %s "$big")
echo "capture: $big, $bytes bytes, $packets packets"
hyperfine --warmup 1 --runs ${RUNS:-3} --export-json "$out/hyperfine_${size}.json" \
  -n sctp-analyzer "$bin analyze --format json --no-progress $big > /dev/null" \
  -n "tshark sctp,stat" "tshark -q -z sctp,stat -r $big > /dev/null" \
  ${TSN:+-n "tshark tsn analysis" "tshark -r $big -o sctp.tsn_analysis:TRUE -T fields -e sctp.retransmission -e sctp.sack_rtt > /dev/null"}
rss() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F: '/Maximum resident/{gsub(/ /,"",$2); print $2}'; }
echo "peak RSS (KiB): sctp-analyzer $(rss $bin analyze --format json --no-progress "$big")  tshark $(rss tshark -q -z sctp,stat -r "$big")"
python3 - "$out/hyperfine_${size}.json" "$packets" "$bytes" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]; pk = int(sys.argv[2] or 0); by = int(sys.argv[3])
ours = res[0]["mean"]
for r in res:
    print(f'{r["command"]:<22} {r["mean"]:8.3f} s  {pk / r["mean"] / 1e6:6.2f} Mpkt/s  {by / r["mean"] / 1e6:8.1f} MB/s  ratio {r["mean"] / ours:6.1f}x')
PY
