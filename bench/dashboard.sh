#!/usr/bin/env bash
# Dashboard timing benchmark: starts the release dashboard on a free loopback port with a temp data
# dir, uploads a large capture through the API, measures upload -> results (status done), then
# times every page and chart endpoint (server time as seen by curl on loopback) RUNS times each,
# with the size of each answer.
# Usage: bench/dashboard.sh [CAPTURE]   (default: bench/out/sctp_200mb.pcap, made by compare.sh)
#        bench/dashboard.sh --many [N]  (a capture of N associations, default 10,000, made with
#                                        analyzer::synth by dashboard/examples/many_associations.rs;
#                                        issue 16 part 1: every answer under 1 MB and 200 ms)
#        bench/dashboard.sh --issue19   (issue 19's acceptance, see bench/dashboard_issue19.sh)
# NOBUILD=1 times the binaries already in $CARGO_TARGET_DIR/release (no cargo build: e.g. while
# another build of the same target dir would replace them).
set -euo pipefail
cd "$(dirname "$0")/.."
rel=${CARGO_TARGET_DIR:-target}/release
build() { [ "${NOBUILD:-0}" = 1 ] || cargo build --release "$@"; }
if [ "${1:-}" = --issue19 ]; then
  shift
  exec bench/dashboard_issue19.sh "$@"
fi
if [ "${1:-}" = --many ]; then
  n=${2:-10000}
  mkdir -p bench/out
  cap=bench/out/many_$n.pcap
  build -p dashboard --example many_associations
  "$rel/examples/many_associations" "$cap" "$n"
else
  cap=${1:-bench/out/sctp_200mb.pcap}
fi
[ -s "$cap" ] || { echo "no $cap: run bench/compare.sh first" >&2; exit 2; }
build --workspace --bin sctp-dashboard
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
"$rel/sctp-dashboard" --listen "127.0.0.1:$port" --data-dir "$work/data" --samples "$work/none" >"$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
base="http://127.0.0.1:$port"
for _ in $(seq 100); do curl -sf "$base/" >/dev/null && break; sleep 0.1; done
t0=$(date +%s.%N)
id=$(curl -sf -F "file=@$cap" "$base/api/captures" | python3 -c 'import json,sys; print(json.load(sys.stdin)["captures"][0]["id"])')
t1=$(date +%s.%N)
while :; do
  st=$(curl -sf "$base/api/captures/$id?limit=0" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')
  [ "$st" = done ] || [ "$st" = failed ] && break
  sleep 0.05
done
t2=$(date +%s.%N)
curl -sf -o /dev/null "$base/captures/$id"
t3=$(date +%s.%N)
python3 -c "print(f'capture {\"$cap\"}: upload {$t1-$t0:.2f} s, analysis {$t2-$t1:.2f} s, first results page at {$t3-$t0:.2f} s ($st)')"
# Charts and tables need the tables (written after the summary): wait for them, then time.
while :; do
  tb=$(curl -sf "$base/api/captures/$id?limit=0" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tables"]["status"])')
  [ "$tb" = pending ] || break
  sleep 0.05
done
t4=$(date +%s.%N)
python3 -c "print(f'tables {\"$tb\"} at {$t4-$t0:.2f} s after the upload started')"
# The associations with the most failovers, an ABORT, and the last one (from the association list).
assocs=$(curl -sf "$base/api/captures/$id/associations?sort=failovers&order=desc&limit=1" \
  | python3 -c 'import json,sys; r=json.load(sys.stdin)["associations"]; print(r[0]["id"] if r else 0)' 2>/dev/null || echo 0)
aborted=$(curl -sf "$base/api/captures/$id/associations?end=abort&limit=1" \
  | python3 -c 'import json,sys; r=json.load(sys.stdin)["associations"]; print(r[0]["id"] if r else 0)' 2>/dev/null || echo 0)
runs=${RUNS:-5}
paths=("/" "/captures/$id" "/captures/$id?offset=5000&sort=packets&order=desc" "/captures/$id?failover=1"
  "/captures/$id?q=10.201.2.1" "/captures/$id/compare" "/captures/$id/compare?metric=retransmissions&top=50"
  "/api/captures" "/api/captures/$id" "/api/captures/$id?offset=5000&limit=50"
  "/api/captures/$id/associations" "/api/captures/$id/associations?end=abort&sort=packets")
for n in 0 "$assocs" "$aborted"; do
  paths+=("/captures/$id/associations/$n"
    "/captures/$id/associations/$n?timeouts0_sort=observed_rto&timeouts0_order=desc&timeouts0_offset=50&failovers_offset=50"
    "/api/captures/$id/associations/$n" "/api/captures/$id/associations/$n/tables/timeouts0?sort=backoff&order=desc")
  for kind in tsn rtt sack_delay throughput timeline; do
    paths+=("/api/captures/$id/associations/$n/charts/$kind?width=1200")
  done
done
paths+=("/api/captures/$id/compare/charts/throughput?width=1200" "/api/captures/$id/compare/charts/gaps?width=1200")
printf '%-88s %5s %10s %9s %9s %9s\n' path HTTP bytes "first ms" "median ms" "max ms"
for path in "${paths[@]}"; do
  times=$(for _ in $(seq "$runs"); do curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}\n' "$base$path"; done)
  echo "$times" | python3 -c "
import sys
rows=[l.split() for l in sys.stdin if l.strip()]
ms=sorted(float(t)*1000 for _,t,_ in rows)
p='$path'.replace('$id', '{id}')
print(f'{p:<88} {rows[0][0]:>5} {int(rows[0][2]):>10} {float(rows[0][1])*1000:9.1f} {ms[len(ms)//2]:9.1f} {ms[-1]:9.1f}')"
done
