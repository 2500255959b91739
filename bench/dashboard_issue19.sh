#!/usr/bin/env bash
# Issue 19's acceptance benchmark (run through `bench/dashboard.sh --issue19`), release build:
#  1. Time to the summary: for a 200 MB capture of one association (about a million packets,
#     dashboard/examples/one_association.rs) and the 200 MB capture of 1,519 associations
#     (compare.sh's sctp_200mb.pcap, make_big_capture), side by side in one run, ROUNDS times
#     alternately: the CLI's `--format json` wall time, and the dashboard's time from the end of
#     the upload (curl returns) to the summary available (status done), polled every 10 ms.
#     Bound: 2 x CLI + 0.5 s.
#  2. Flat memory: a 1 GB capture (make_big_capture of cut_p20_sack40_sender) uploaded, then
#     three 200 MB captures at once while it runs (the two above and one of spike_p20_rtomin100;
#     default workers = cores = 2 here: one runs beside it, two wait in line); the dashboard's
#     peak RSS (VmHWM) once every table is written. Bound: 512 MB. Then every table of the 1 GB capture against the CLI's
#     `--format parquet` output for that file: same tables, same rows (dashboard example
#     same_tables; the CLI is run from bench/out so that its `capture` column is the same name).
# Captures go to bench/out (ignored by git). Usage: bench/dashboard_issue19.sh  (env: ROUNDS=3)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
rounds=${ROUNDS:-3}
out=bench/out
mkdir -p "$out"
cargo build --release --workspace --bin sctp-dashboard --bin sctp-analyzer \
  --example make_big_capture --example one_association --example same_tables
rel="$CARGO_TARGET_DIR/release"
one="$out/one_assoc_200mb.pcap"
many="$out/sctp_200mb.pcap"
big="$out/sctp_1000mb.pcap"
[ -s "$one" ] || "$rel/examples/one_association" "$one" 200
[ -s "$many" ] || "$rel/examples/make_big_capture" sample-traces/cut_p20_sack40_sender.pcap "$many" 200
[ -s "$big" ] || "$rel/examples/make_big_capture" sample-traces/cut_p20_sack40_sender.pcap "$big" 1000
# A third 200 MB capture (other content), so that with the two above three wait behind the 1 GB.
spike="$out/q_spike_p20_rtomin100_200mb.pcap"
[ -s "$spike" ] || "$rel/examples/make_big_capture" sample-traces/spike_p20_rtomin100_sender.pcap "$spike" 200
work=$(mktemp -d)
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$work/none"

# start: a fresh dashboard (default workers) on a free loopback port; sets $server, $base.
start() {
  rm -rf "$work/data"
  "$rel/sctp-dashboard" --listen 127.0.0.1:0 --data-dir "$work/data" --samples "$work/none" \
    >"$work/server.out" 2>>"$work/server.log" &
  server=$!
  for _ in $(seq 200); do
    base=$(sed -n 's|^sctp-dashboard: serving \(http://[0-9.:]*\)/.*|\1|p' "$work/server.out")
    [ -n "$base" ] && return 0
    sleep 0.05
  done
  echo "the dashboard did not start" >&2; cat "$work/server.log" >&2; exit 1
}
stop() { kill "$server"; wait "$server" 2>/dev/null || true; server=""; }

# The timing client: uploads with curl (streamed from disk), then polls the API every 10 ms.
cat >"$work/client.py" <<'PY'
import json, subprocess, sys, time, urllib.request

def get(base, path):
    with urllib.request.urlopen(base + path) as r:
        return json.load(r)

def upload(base, path):
    t0 = time.time()
    out = subprocess.run(["curl", "-sf", "-F", f"file=@{path}", base + "/api/captures"],
                         check=True, capture_output=True).stdout
    return json.loads(out)["captures"][0]["id"], t0, time.time()

def wait(base, cid, tables=False, step=0.01):
    while True:
        c = get(base, f"/api/captures/{cid}?limit=0")
        if c["status"] == "failed":
            sys.exit(f"analysis failed: {c['error']}")
        if c["status"] == "done" and (not tables or c["tables"]["status"] != "pending"):
            return time.time(), c
        time.sleep(step)

cmd = sys.argv[1]
if cmd == "summary":  # BASE FILE: seconds from the end of the upload to the summary
    base, path = sys.argv[2], sys.argv[3]
    cid, t0, t1 = upload(base, path)
    t2, c = wait(base, cid)
    t3, c = wait(base, cid, tables=True, step=0.1)
    print(json.dumps({"id": cid, "upload_s": t1 - t0, "summary_s": t2 - t1, "tables_s": t3 - t1,
                      "associations": len(get(base, f"/api/captures/{cid}?limit=all")["result"]["associations"])}))
    req = urllib.request.Request(base + f"/api/captures/{cid}", method="DELETE")
    urllib.request.urlopen(req).read()
elif cmd == "flat":  # BASE BIG QUEUED...: the 1 GB upload, the others while it runs
    base, bigp, queued = sys.argv[2], sys.argv[3], sys.argv[4:]
    big_id, t0, t1 = upload(base, bigp)
    procs = [subprocess.Popen(["curl", "-sf", "-F", f"file=@{q}", base + "/api/captures"],
                              stdout=subprocess.PIPE) for q in queued]
    ids = [json.loads(p.communicate()[0])["captures"][0]["id"] for p in procs]
    seen = {}
    for i in ids:
        p = get(base, f"/api/captures/{i}?limit=0")["progress"]
        seen[i] = (p["phase"], p["queue_position"])
    tb, c = wait(base, big_id)
    tt, c = wait(base, big_id, tables=True, step=0.2)
    for i in ids:
        wait(base, i, tables=True, step=0.2)
    print(json.dumps({"big": big_id, "others": ids, "states_after_upload": seen,
                      "big_upload_s": t1 - t0, "big_summary_after_upload_s": tb - t1,
                      "big_tables_after_upload_s": tt - t1, "tables": c["tables"]["status"]}))
PY

cli_json() { # FILE -> wall seconds of the CLI's --format json
  local t0 t1
  t0=$(date +%s.%N)
  "$rel/sctp-analyzer" analyze --format json --no-progress "$1" >/dev/null
  t1=$(date +%s.%N)
  python3 -c "print($t1 - $t0)"
}

echo "== 1. time to the summary (end of upload -> summary), $rounds rounds, side by side"
start
: >"$work/rows"
for r in $(seq "$rounds"); do
  for f in "$one" "$many"; do
    cat "$f" >/dev/null
    cli=$(cli_json "$f")
    d=$(python3 "$work/client.py" summary "$base" "$f")
    echo "$f $cli $d" >>"$work/rows"
    echo "round $r $(basename "$f"): CLI --format json $cli s; dashboard $d"
  done
done
stop
python3 - "$work/rows" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f, cli, d = line.split(" ", 2)
    rows.setdefault(f, []).append((float(cli), json.loads(d)))
print(f"{'capture':<34} {'assocs':>7} {'CLI json s':>10} {'summary s':>10} {'bound s':>8} {'tables s':>9} {'upload s':>9}  verdict")
ok = True
for f, v in rows.items():
    cli = statistics.median(c for c, _ in v)
    summ = statistics.median(d["summary_s"] for _, d in v)
    tab = statistics.median(d["tables_s"] for _, d in v)
    up = statistics.median(d["upload_s"] for _, d in v)
    bound = 2 * cli + 0.5
    good = all(d["summary_s"] <= 2 * c + 0.5 for c, d in v)
    ok &= good
    print(f"{f.split('/')[-1]:<34} {v[0][1]['associations']:>7} {cli:>10.3f} {summ:>10.3f} {bound:>8.3f} {tab:>9.2f} {up:>9.2f}  {'within' if good else 'OVER'} (every round)")
print("medians of", len(next(iter(rows.values()))), "rounds; summary = end of upload -> status done; tables = end of upload -> every table written")
sys.exit(0 if ok else 1)
PY

echo "== 2. 1 GB upload with others queued: peak RSS, tables against the CLI's"
start
queued=("$many" "$one" "$spike")
cat "$big" >/dev/null
res=$(python3 "$work/client.py" flat "$base" "$big" "${queued[@]}")
rss=$(awk '/VmHWM/{print $2}' "/proc/$server/status")
echo "$res"
big_id=$(echo "$res" | python3 -c 'import json,sys; print(json.load(sys.stdin)["big"])')
stop
echo "dashboard peak RSS (VmHWM) over the 1 GB analysis and ${#queued[@]} more: $((rss / 1024)) MB (bound 512 MB)"
rm -rf "$out/cli_parquet_1000"
absrel=$(cd "$rel" && pwd)
t0=$(date +%s.%N)
(cd "$out" && /usr/bin/time -f "%M" -o "$work/cli_rss" "$absrel/sctp-analyzer" analyze --format parquet \
  --no-progress --out cli_parquet_1000 "$(basename "$big")" 2>"$work/cli.err")
t1=$(date +%s.%N)
echo "CLI --format parquet on 1 GB: $(python3 -c "print(round($t1 - $t0, 1))") s, peak RSS $(( $(tail -1 "$work/cli_rss") / 1024 )) MB"
"$rel/examples/same_tables" "$out/cli_parquet_1000" "$work/data/captures/$big_id/tables"
[ "$((rss / 1024))" -lt 512 ] || { echo "peak RSS over 512 MB"; exit 1; }
echo "issue 19 benchmark: all bounds met"
