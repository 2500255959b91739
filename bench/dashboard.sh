#!/usr/bin/env bash
# Dashboard timing benchmark: starts the release dashboard on a free loopback port with a temp data
# dir, uploads a large capture through the API, measures upload -> results (status done), then
# times every page and chart endpoint (server time as seen by curl on loopback) RUNS times each.
# Usage: bench/dashboard.sh [CAPTURE]   (default: bench/out/sctp_200mb.pcap, made by compare.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
cap=${1:-bench/out/sctp_200mb.pcap}
[ -s "$cap" ] || { echo "no $cap: run bench/compare.sh first" >&2; exit 2; }
cargo build --release --workspace --bin sctp-dashboard
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
target/release/sctp-dashboard --listen "127.0.0.1:$port" --data-dir "$work/data" --samples "$work/none" >"$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
base="http://127.0.0.1:$port"
for _ in $(seq 100); do curl -sf "$base/" >/dev/null && break; sleep 0.1; done
t0=$(date +%s.%N)
id=$(curl -sf -F "file=@$cap" "$base/api/captures" | python3 -c 'import json,sys; print(json.load(sys.stdin)["captures"][0]["id"])')
t1=$(date +%s.%N)
while :; do
  st=$(curl -sf "$base/api/captures/$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')
  [ "$st" = done ] || [ "$st" = failed ] && break
  sleep 0.05
done
t2=$(date +%s.%N)
curl -sf -o /dev/null "$base/captures/$id"
t3=$(date +%s.%N)
python3 -c "print(f'capture {\"$cap\"}: upload {$t1-$t0:.2f} s, analysis {$t2-$t1:.2f} s, first results page at {$t3-$t0:.2f} s ($st)')"
runs=${RUNS:-5}
for path in "/" "/captures/$id" "/captures/$id/associations/0" "/captures/$id/compare" \
    "/api/captures/$id" \
    "/api/captures/$id/associations/0/charts/tsn?width=1200" \
    "/api/captures/$id/associations/0/charts/rtt?width=1200" \
    "/api/captures/$id/associations/0/charts/sack_delay?width=1200" \
    "/api/captures/$id/associations/0/charts/throughput?width=1200" \
    "/api/captures/$id/associations/0/charts/timeline?width=1200" \
    "/api/captures/$id/compare/charts/throughput?width=1200" \
    "/api/captures/$id/compare/charts/gaps?width=1200"; do
  times=$(for _ in $(seq "$runs"); do curl -s -o /dev/null -w '%{http_code} %{time_total}\n' "$base$path"; done)
  echo "$times" | python3 -c "
import sys
rows=[l.split() for l in sys.stdin if l.strip()]
ms=sorted(float(t)*1000 for _,t in rows)
print(f'{\"$path\":<70} HTTP {rows[0][0]}  median {ms[len(ms)//2]:7.1f} ms  max {ms[-1]:7.1f} ms')"
done
