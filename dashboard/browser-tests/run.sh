#!/usr/bin/env bash
# Browser tests of the dashboard: builds sctp-dashboard, starts it on a free loopback port with a
# temp data dir, installs playwright-core (npm ci) and runs test.mjs, explained.mjs and long_tables.mjs, in Debian's headless
# Chromium (apt-get install chromium when missing and root), then stops the server.
# Screenshots go to $SHOTS (default: a temp folder, printed at the end). MANY_CAPTURE: a capture
# of many associations (default: 10,000 made with analyzer::synth).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "browser test skipped: /usr/bin/chromium missing (apt-get install chromium as root)" >&2
    exit 0
  fi
fi

capture=${CAPTURE:-}
if [ -z "$capture" ]; then
  for c in "$root/../shared/captures/lab/p20_sack40_sender.pcap" "$root"/sample-traces/cut_p20_sack40_sender.pcap; do
    if [ -f "$c" ]; then capture=$c; break; fi
  done
fi
if [ -z "$capture" ]; then
  echo "browser test skipped: no capture with a failover found" >&2
  exit 0
fi

# Associations aborted with cause 12 (optional: the test skips without it).
abort_capture=${ABORT_CAPTURE:-}
if [ -z "$abort_capture" ]; then
  c="$root/../shared/captures/public/Spartan-F117__VAPT_CoreNetwork5G__log_analysis_replayAttack.pcapng"
  if [ -f "$c" ]; then abort_capture=$c; fi
fi

# Multistream run with loss, at the receiver: head-of-line blocking (the test skips without it).
hol_capture=${HOL_CAPTURE:-}
if [ -z "$hol_capture" ] && [ -f "$root/sample-traces/hol_s4_loss2_receiver.pcap" ]; then
  hol_capture=$root/sample-traces/hol_s4_loss2_receiver.pcap
fi

# The binaries as `cargo test --workspace` built them: the same features, so no second polars.
cargo test -q --workspace --no-run
bin="${CARGO_TARGET_DIR:-$root/target}/debug/sctp-dashboard"

work=$(mktemp -d)

# A run with many T3-rtx timeouts: the association page's long tables (the test skips without it).
long_table_capture=${LONG_TABLE_CAPTURE:-}
if [ -z "$long_table_capture" ] && [ -f "$root/sample-traces/zerowin_p10_sender.pcap" ]; then
  long_table_capture=$root/sample-traces/zerowin_p10_sender.pcap
fi

# Many associations (issue 16 part 1): MANY_CAPTURE, else 10,000 made with analyzer::synth
# (dashboard/examples/many_associations.rs).
many_capture=${MANY_CAPTURE:-}
if [ -z "$many_capture" ]; then
  many_capture=$work/many_associations.pcap
  "${CARGO_TARGET_DIR:-$root/target}/debug/examples/many_associations" "$many_capture" "${MANY_ASSOCIATIONS:-10000}"
fi
export SHOTS=${SHOTS:-$work/shots}
mkdir -p "$SHOTS"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
# Samples: none at the top level (nothing imported), the Eklund campaigns (usrsctp, Linux) as
# study sets.
mkdir -p "$work/samples/studies"
study_set= study_set_linux=
if [ -d "$root/sample-traces/studies/eklund" ]; then
  ln -s "$root/sample-traces/studies/eklund" "$work/samples/studies/eklund"
  study_set=studies/eklund
fi
if [ -d "$root/sample-traces/studies/eklund-linux" ]; then
  ln -s "$root/sample-traces/studies/eklund-linux" "$work/samples/studies/eklund-linux"
  study_set_linux=studies/eklund-linux
fi
"$bin" --listen "127.0.0.1:$port" --data-dir "$work/data" --samples "$work/samples" >"$work/server.log" 2>&1 &
server=$!
cleanup() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:$port/api/captures" >/dev/null 2>&1; then break; fi
  sleep 0.1
done

cd "$here"
if [ -f package-lock.json ]; then npm ci --no-audit --no-fund >/dev/null; else npm install --no-audit --no-fund >/dev/null; fi
status=0
DASHBOARD_URL="http://127.0.0.1:$port" CAPTURE="$capture" ABORT_CAPTURE="$abort_capture" HOL_CAPTURE="$hol_capture" MANY_CAPTURE="$many_capture" LONG_TABLE_CAPTURE="$long_table_capture" STUDY_SET="$study_set" STUDY_SET_LINUX="$study_set_linux" node --test --test-concurrency=1 test.mjs explained.mjs long_tables.mjs || status=$?
echo "screenshots: $SHOTS"
if [ "$status" != 0 ]; then
  echo "--- server log" >&2
  tail -50 "$work/server.log" >&2
fi
exit "$status"
