#!/usr/bin/env bash
# Dashboard under load and fault, over real sockets on loopback only (run by scripts/test-all.sh):
#  1. 20 concurrent uploads of distinct captures: all accepted, all analysed, all listed.
#  2. wrk: page and API requests (20 connections, LOAD_SECONDS s, >= 2,000 requests) rotating over
#     every page kind: 0 socket errors, 0 non-2xx; prints requests/s and p99 latency.
#  3. An upload killed half-way: no entry, no temp file left.
#  4. Path traversal (../ and percent-encoded, in ids, table and asset names, upload file names):
#     all 4xx, nothing read or written outside the data dir.
#  5. Captures that trip the analyzer's bounds: analysed with warnings, the others untouched.
#  6. A crash during analysis (kill -9 while a large capture is analysed), then a restart on the
#     same data dir: every stored capture and result intact, the interrupted one analysed again.
#     And a crash while the tables are written (the summary published): after the restart the
#     summary is served at once, no table is served until all are written again, then all are.
#  7. Disk full (root only: the data dir on a 4 MiB tmpfs): HTTP 507 with a clear message, no
#     partial entry, and the server still serves. Skipped, and said so, when not root.
#  8. Binding to a non-loopback address (0.0.0.0, inside a network namespace this script creates,
#     holding only its own loopback: root only): the warning is printed and --token is enforced.
# Usage: dashboard/load-tests/run.sh   (env: LOAD_SECONDS, default 8)
set -euo pipefail
cd "$(dirname "$0")/../.."
here=dashboard/load-tests
py() { python3 "$here/client.py" "$@"; }

if ! command -v wrk >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
  else
    echo "wrk missing (apt-get install wrk as root)" >&2
    exit 1
  fi
fi

# The binaries as `cargo test --workspace` built them: the same features, so no second polars.
cargo test -q --workspace --no-run
bin="${CARGO_TARGET_DIR:-target}/debug/sctp-dashboard"
work=$(mktemp -d)
server=""
mounted=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  [ -n "$mounted" ] && umount "$mounted" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/none"
sample=sample-traces/cut_p20_sack40_sender.pcap

# start DATA_DIR: starts the server on a free loopback port; sets $server and $base.
start() {
  # Emptied here, not by the redirection below: that one runs in the forked child, and a loop
  # that reads the file before the child truncates it would take the last server's address.
  : >"$work/server.out"
  "$bin" --listen 127.0.0.1:0 --data-dir "$1" --samples "$work/none" --workers 2 \
    >"$work/server.out" 2>>"$work/server.log" &
  server=$!
  for _ in $(seq 200); do
    base=$(sed -n 's|^sctp-dashboard: serving \(http://[0-9.:]*\)/.*|\1|p' "$work/server.out")
    [ -n "$base" ] && return 0
    kill -0 "$server" 2>/dev/null || break
    sleep 0.05
  done
  echo "FAIL the dashboard did not start:"; cat "$work/server.log"; exit 1
}
alive() { kill -0 "$server" 2>/dev/null && curl -sf -o /dev/null "$base/" || { echo "FAIL server down after $1"; exit 1; }; }
tmp_empty() {
  local left
  left=$(find "$1/tmp" -type f | wc -l)
  [ "$left" = 0 ] || { echo "FAIL $2: $left temp files left in $1/tmp"; exit 1; }
}

data="$work/data"
start "$data"
echo "== load: 20 concurrent uploads"
py make-captures "$work/uploads" 20 "$sample"
ids=$(py uploads "$base" "$work/uploads") || { echo "$ids"; exit 1; }
statuses=$(py wait "$base" $ids --timeout 600)
done_n=$(echo "$statuses" | python3 -c 'import json,sys; print(sum(s=="done" for s in json.load(sys.stdin).values()))')
listed=$(py list "$base")
for i in $ids; do
  case " $listed " in *" $i "*) ;; *) echo "FAIL upload $i not listed"; exit 1 ;; esac
done
[ "$done_n" = 20 ] || { echo "FAIL only $done_n of 20 uploads analysed: $statuses"; exit 1; }
echo "uploads completed: 20 of 20 accepted, analysed and listed"

echo "== load: wrk over pages and API"
npaths=$(py wrk-paths "$base" "$work/paths.lua")
secs=${LOAD_SECONDS:-8}
wrk -t2 -c20 -d"${secs}s" --timeout 10s --latency -s "$work/paths.lua" "$base" >"$work/wrk.txt"
cat "$work/wrk.txt"
python3 - "$work/wrk.txt" "$npaths" <<'EOF'
import re, sys
t = open(sys.argv[1]).read()
n = int(re.search(r"(\d+) requests in", t).group(1))
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1))
p99 = re.search(r"99%\s+([\d.]+\w+)", t).group(1)
errs = re.search(r"Socket errors: (.*)", t)
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", t)
print(f"load figures: {n} requests over {sys.argv[2]} paths, {rps:.0f} requests/s, p99 {p99}")
if errs or non2xx:
    print(f"FAIL wrk: {errs.group(0) if errs else ''} {non2xx.group(0) if non2xx else ''}")
    sys.exit(1)
if n < 2000:
    print(f"FAIL wrk: only {n} requests (want >= 2000)")
    sys.exit(1)
EOF
alive "the load"

echo "== fault: an upload killed half-way"
before=$(py list "$base" | wc -w)
py half-upload "$base"
sleep 1
after=$(py list "$base" | wc -w)
[ "$before" = "$after" ] || { echo "FAIL the half upload left an entry ($before -> $after)"; exit 1; }
tmp_empty "$data" "half upload"
alive "the half upload"
echo "half upload: no entry, no temp file"

echo "== fault: path traversal"
TRAVERSAL_SAMPLE=sample-traces/fmt_sender.pcap py traversal "$base" "$data" >/dev/null
alive "the traversal probes"

echo "== fault: captures that trip the analyzer's bounds"
bound_ids=""
for f in caplen_over_256k.pcap sack_65535_dups.pcap ipv4_fragment_never_completed.pcap; do
  out=$(py upload-one "$base" "sample-traces/broken/$f")
  [[ "$(echo "$out" | head -1)" == 2?? ]] || { echo "FAIL upload $f: $out"; exit 1; }
  bound_ids="$bound_ids $(echo "$out" | tail -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["captures"][0]["id"])')"
done
st=$(py wait "$base" $bound_ids --timeout 120)
echo "$st" | python3 -c 'import json,sys; s=json.load(sys.stdin); sys.exit(0 if all(v=="done" for v in s.values()) else 1)' \
  || { echo "FAIL bound-tripping captures: $st"; exit 1; }
for i in $bound_ids; do
  curl -sf "$base/api/captures/$i" | python3 -c 'import json,sys; r=json.load(sys.stdin)["result"]; sys.exit(0 if r["warnings"] else 1)' \
    || { echo "FAIL $i: no warning"; exit 1; }
done
alive "the bound-tripping captures"
echo "bounds: 3 captures analysed with their warnings, server up"

echo "== fault: crash (kill -9) during an analysis, then restart"
py make-big "$work/big.pcap" 40 "$sample"
for i in $ids; do cp "$data/captures/$i/report.json" "$work/report-$i.json"; done
big=$(py upload-one "$base" "$work/big.pcap" | tail -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["captures"][0]["id"])')
# Its analysis is under way while the summary pass runs (status running) or, the summary being
# published already (issue 19: the summary pass may start while the upload arrives), while the
# table pass runs (done, tables pending).
s=""
for _ in $(seq 200); do
  s=$(py progress "$base" "$big")
  case "$s" in running* | "done pending"*) break ;; esac
  sleep 0.05
done
case "$s" in running* | "done pending"*) ;; *) echo "FAIL the large capture was never seen under analysis ($s)"; exit 1 ;; esac
kill -9 "$server"; wait "$server" 2>/dev/null || true; server=""
echo "killed the server while $big was $s"
start "$data"
listed=$(py list "$base")
for i in $ids $bound_ids $big; do
  case " $listed " in *" $i "*) ;; *) echo "FAIL $i lost by the crash"; exit 1 ;; esac
done
for i in $ids; do
  cmp -s "$data/captures/$i/report.json" "$work/report-$i.json" || { echo "FAIL result of $i changed"; exit 1; }
done
st=$(py wait "$base" $ids $big --timeout 600)
echo "$st" | python3 -c 'import json,sys; s=json.load(sys.stdin); sys.exit(0 if all(v=="done" for v in s.values()) else 1)' \
  || { echo "FAIL after the restart: $st"; exit 1; }
tmp_empty "$data" "restart"
echo "crash: $(echo "$listed" | wc -w) stored captures intact after kill -9, interrupted analysis redone"

echo "== fault: crash (kill -9) while the tables are written, then restart"
py make-big "$work/big2.pcap" 60 sample-traces/spur_pmr1_rtomin30_sender.pcap
big2=$(py upload-one "$base" "$work/big2.pcap" | tail -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["captures"][0]["id"])')
p=""
for _ in $(seq 1200); do
  p=$(py progress "$base" "$big2")
  [ "$p" = "done pending writing_tables" ] && break
  sleep 0.05
done
[ "$p" = "done pending writing_tables" ] || { echo "FAIL never saw the tables being written ($p)"; exit 1; }
sleep 0.3
kill -9 "$server"; wait "$server" 2>/dev/null || true; server=""
[ -d "$data/captures/$big2/tables" ] && { echo "FAIL tables/ exists before the table pass ended"; exit 1; }
echo "killed the server while the tables of $big2 were written ($(ls "$data/captures/$big2/tables.tmp" 2>/dev/null | wc -l) files in tables.tmp)"
cp "$data/captures/$big2/report.json" "$work/report-big2.json"
start "$data"
# The summary is served at once; no table is served until all are written again.
st=$(curl -s -o /dev/null -w '%{http_code}' "$base/api/captures/$big2?limit=0")
[ "$st" = 200 ] || { echo "FAIL summary not served after the restart: HTTP $st"; exit 1; }
py progress "$base" "$big2" | grep -q "^done " || { echo "FAIL the summary is not published after the restart"; exit 1; }
code=$(curl -s -o "$work/early.parquet" -w '%{http_code}' "$base/captures/$big2/tables/chunks.parquet")
tables_now=$(py progress "$base" "$big2" | cut -d' ' -f2)
if [ "$code" = 200 ] && [ "$tables_now" != ready ]; then echo "FAIL a table was served before all were written"; exit 1; fi
[ "$code" = 200 ] || [ "$code" = 409 ] || { echo "FAIL table during the redo: HTTP $code"; exit 1; }
st=$(py wait "$base" "$big2" --timeout 600)
echo "$st" | grep -q '"done"' || { echo "FAIL tables not redone: $st"; exit 1; }
cmp -s "$data/captures/$big2/report.json" "$work/report-big2.json" || { echo "FAIL the summary changed"; exit 1; }
[ -e "$data/captures/$big2/tables.tmp" ] && { echo "FAIL tables.tmp left"; exit 1; }
n=$(ls "$data/captures/$big2/tables" | grep -c '\.parquet$')
[ "$n" -ge 20 ] || { echo "FAIL only $n tables after the redo"; exit 1; }
curl -sf -o "$work/chunks.parquet" "$base/captures/$big2/tables/chunks.parquet" || { echo "FAIL chunks table not served"; exit 1; }
[ "$(tail -c 4 "$work/chunks.parquet")" = PAR1 ] && [ "$(head -c 4 "$work/chunks.parquet")" = PAR1 ] \
  || { echo "FAIL chunks.parquet is not a whole Parquet file"; exit 1; }
echo "crash while writing tables: summary served at once after the restart (tables HTTP $code meanwhile), $n tables redone whole"
kill "$server"; wait "$server" 2>/dev/null || true; server=""

echo "== fault: disk full during an upload"
if [ "$(id -u)" = 0 ] && mkdir -p "$work/full" && mount -t tmpfs -o size=4m tmpfs "$work/full" 2>/dev/null; then
  mounted="$work/full"
  start "$work/full/data"
  py make-big "$work/six.pcap" 6 "$sample"
  out=$(py upload-one "$base" "$work/six.pcap")
  code=$(echo "$out" | head -1)
  echo "disk full: HTTP $code $(echo "$out" | tail -1)"
  [ "$code" = 507 ] || { echo "FAIL disk full gave HTTP $code"; exit 1; }
  echo "$out" | grep -q "no space left in the data dir" || { echo "FAIL unclear message"; exit 1; }
  [ -z "$(py list "$base")" ] || { echo "FAIL a partial entry is listed"; exit 1; }
  tmp_empty "$work/full/data" "disk full"
  out=$(py upload-one "$base" sample-traces/fmt_sender.pcap)
  [[ "$(echo "$out" | head -1)" == 2?? ]] || { echo "FAIL no upload after the disk-full one: $out"; exit 1; }
  alive "disk full"
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
  umount "$work/full"; mounted=""
  echo "disk full: 507 with a clear message, no partial entry, server up"
else
  echo "disk full: SKIPPED (needs root to mount a small tmpfs)"
fi
echo "== bind: non-loopback address in a private network namespace, with --token"
if [ "$(id -u)" = 0 ] && command -v ip >/dev/null 2>&1 && unshare -n true 2>/dev/null; then
  mkdir -p "$work/ns"
  BIN="$bin" DIR="$work/ns" NONE="$work/none" unshare -n bash -c '
    set -e
    ip link set lo up
    "$BIN" --listen 0.0.0.0:18080 --data-dir "$DIR/data" --samples "$NONE" --token s3cret \
      >"$DIR/out" 2>"$DIR/err" &
    pid=$!
    for _ in $(seq 200); do grep -q serving "$DIR/out" 2>/dev/null && break; sleep 0.05; done
    a=$(curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:18080/api/captures)
    b=$(curl -s -o /dev/null -w "%{http_code}" -H "Authorization: Bearer s3cret" http://127.0.0.1:18080/api/captures)
    kill $pid; wait $pid 2>/dev/null || true
    echo "$a $b"
  ' >"$work/ns/codes"
  read -r no_token with_token <"$work/ns/codes"
  # (tracing logs to stdout)
  cat "$work/ns/out" "$work/ns/err" | grep -q "listening on non-loopback address 0.0.0.0:18080" \
    || { echo "FAIL no non-loopback warning:"; cat "$work/ns/out" "$work/ns/err"; exit 1; }
  [ "$no_token" = 401 ] && [ "$with_token" = 200 ] \
    || { echo "FAIL token: without $no_token, with $with_token"; exit 1; }
  echo "bind: warning printed; without the token 401, with it 200"
else
  echo "bind: SKIPPED (needs root to create a network namespace)"
fi
echo "load and fault tests: all passed"
