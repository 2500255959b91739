#!/usr/bin/env bash
# Regenerates the sample traces with the lab (../shared/lab): real usrsctp associations between
# two network namespaces that the lab creates and deletes. Needs root, gcc, patch, libusrsctp-dev,
# tcpdump, tshark, nftables, iproute2, python3. Run on an idle machine (timers tick every 10 ms).
# Usage: sample-traces/generate.sh [NAME_PATTERN]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lab=${LAB:-$here/../../shared/lab}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$lab"/. "$work/"
chmod -R u+w "$work"
cd "$work"
# lab-abort.patch: sctpgen -A / gen.sh ABORT_AT (client abort with a reason); binaries are built
# in the temp dir, so the patched sctpgen never lands in the lab's shared build cache.
patch -s -p1 < "$here/lab-abort.patch"
# lab-stalls.patch: sctpgen -R / gen.sh STOP_READ_AT (the server stops reading: zero window),
# sctpgen -L / gen.sh BIG_MSG (every K-th message large) and netwire -M / gen.sh MTU_DROP_ABOVE
# (the wire drops frames above a size: a path MTU black hole).
patch -s -p1 < "$here/lab-stalls.patch"
# lab-streams.patch: sctpgen -N / gen.sh STREAMS (SCTP_INITMSG with N streams on both sides, the
# client sends message i on stream i % N, ordered), sctpgen -n MIN:MAX / gen.sh MSGLEN=MIN:MAX
# (message sizes from MIN to MAX bytes, a fixed hash of the message number), and the server's -v
# RECV lines gain sid, ssn, flags, cumtsn (struct sctp_rcvinfo) and rcv_epoch (delivery time).
patch -s -p1 < "$here/lab-streams.patch"
# lab-frozen.patch: netwire -K / gen.sh EAT_MSG (the wire drops every frame holding the DATA of
# one client message, every copy on every path: a middlebox or receiver refusing one message).
patch -s -p1 < "$here/lab-frozen.patch"
export LAB_BIN="$work/bin"
pat=${1:-.}
run() { # name "ENV=.." 'TRUTH_EXTRA' gen.sh args...
  local name=$1 envs=$2 extra=$3; shift 3
  echo "$name" | grep -qE "$pat" || return 0
  echo "=== $name: $envs gen.sh $*"
  env RTPRIO=20 $envs TRUTH_EXTRA="$extra" ./gen.sh "$@" "out/$name"
  python3 measure.py "out/$name" >/dev/null || true
  # runs whose TRUTH_EXTRA has an "end": what tshark shows of it (ABORT / restarting INIT) -> truth
  python3 "$here/lifecycle_truth.py" "out/$name"
  # multistream runs: head-of-line blocking truth from the server's delivery log + the captures
  case $name in hol_*) python3 "$here/hol_truth.py" "out/$name" ;; esac
  # message-eating runs: the refused TSN and its drops from the wire log -> truth
  case $name in frozen_*) python3 "$here/frozen_truth.py" "out/$name" ;; esac
}
mkdir -p out
T='"spurious_failover_expected": false'
# Multihomed, paced 20 ms, SACK delay 40 ms, RTO.min 100, PMR 2, primary cut 4 s after start.
run cut_p20_sack40 "VERBOSE=0" "{\"scenario\": \"paced 20 ms, primary path cut at 4 s\", $T, \"cause\": \"path 1 cut\"}" \
  40 100 2 20 20 4 6
# Sparse traffic (one message every 250 ms) with the default 200 ms SACK delay, cut at 6 s.
run sparse_sack200 "VERBOSE=0" "{\"scenario\": \"sparse 250 ms, SACK delay 200 ms, primary cut at 6 s\", $T, \"cause\": \"path 1 cut\"}" \
  200 100 2 20 250 6 9
# SCTP over UDP (RFC 6951), port 9899.
run udp_cut_p20 "MODE=udp VERBOSE=0" "{\"scenario\": \"SCTP over UDP 9899, paced 20 ms, primary cut at 3 s\", $T, \"cause\": \"path 1 cut\"}" \
  40 100 2 20 20 3 5
# Spurious failover: RTO.min 30 ms < SACK delay 200 ms, PMR 1, no failure at all.
run spur_pmr1_rtomin30 "RTO_INIT=100 VERBOSE=0" "{\"scenario\": \"spurious failover: RTO.min 30 ms < peer SACK delay 200 ms, sparse 400 ms, no failure\", \"spurious_failover_expected\": true, \"cause\": \"RTO.min 30 ms < SACK delay 200 ms\"}" \
  200 30 1 5 400 -1 6
# RTT spike on path 1 (one-way 20 -> 400 ms from +3 s to +5 s, nothing lost) with RTO.min 100 ms:
# the sender fails over while path 1 works (and fails back): cause rtt_spike.
run spike_p20_rtomin100 "SPIKE=3:5:400 VERBOSE=0" "{\"scenario\": \"RTT spike on path 1 (one-way 20 -> 400 ms from client start +3 s to +5 s), no loss, no failure, RTO.min 100 ms\", \"spurious_failover_expected\": true, \"cause\": \"RTT spike above the RTO\"}" \
  40 100 2 20 20 -1 7
# Client abort: as cut_p20_sack40 but no cut; 2.01 s after sending started (10 ms after the 101st
# message) the client aborts (sctpgen -A, lab-abort.patch): one ABORT chunk with error cause 12
# (User-Initiated Abort) and a reason text. Between two messages, so no SACK of the server reaches
# the client's stack in the few ms it still answers out-of-the-blue packets (with a T-bit ABORT).
run abort_p20 "ABORT_AT=2.01 VERBOSE=0" "{\"scenario\": \"paced 20 ms, no path failure; the client aborts the association 2.01 s after it started sending, with a reason\", $T, \"end\": {\"kind\": \"abort\", \"by\": \"client\", \"cause\": 12, \"cause_name\": \"User-Initiated Abort\", \"reason\": \"sctpgen abort after 2.01 s\"}}" \
  40 100 2 20 20 -1 4
# Association restart: the client process _exit()s after 2 s of sending (no SHUTDOWN, no ABORT);
# 0.5 s later a new client on the same addresses and ports sends INIT: the server's association
# restarts (SCTP_RESTART), the new one sends for 2.5 s and shuts down.
run restart_short_p20 "RESTART_AT=2 VERBOSE=0" "{\"scenario\": \"paced 20 ms, no path failure; the client process dies after 2 s of sending, a new client restarts the association 0.5 s later (same addresses and ports)\", $T, \"end\": {\"kind\": \"restarted\", \"by\": \"client\"}}" \
  40 100 2 20 20 -1 5
# Zero window: paced 10 ms, 1000-byte messages, no path failure; 0.3 s after the first message
# the server stops reading (sctpgen -R, lab-stalls.patch): its receive buffer fills, the
# window it advertises falls to nothing and the client can only probe it (RFC 9260 6.1 A) until
# it gives up. The `zero_window` stall of issue 15.
run zerowin_p10 "STOP_READ_AT=0.3 MSGLEN=1000 VERBOSE=0" "{\"scenario\": \"paced 10 ms, 1000-byte messages, no path failure; the server stops reading 0.3 s after the first message\", $T, \"stall\": {\"cause\": \"zero_window\", \"by\": \"server\"}}" \
  40 100 2 20 10 -1 2
# Path MTU black hole: paced 20 ms, 100-byte messages with every 10th one 1200 bytes; 2 s after
# the start the wire drops every frame above 1000 bytes on both paths (netwire -M,
# lab-stalls.patch): the large message is resent again and again while the small ones after it
# get through, until the client aborts. The `pmtu_black_hole` stall of issue 15 (seen at the
# sender: the receiver never sees the dropped packets).
run pmtu_p20 "BIG_MSG=1200:10 MTU_DROP_ABOVE=1000 VERBOSE=0" "{\"scenario\": \"paced 20 ms, 100-byte messages, every 10th 1200 bytes; from 2 s on the wire drops frames above 1000 bytes on both paths\", $T, \"stall\": {\"cause\": \"pmtu_black_hole\", \"drop_above_bytes\": 1000}}" \
  40 100 2 20 20 2 5
# Frozen cumulative ack: paced 20 ms, 100-byte messages, no path failure; the wire drops every
# frame holding client message 100 (2 s in), every copy on both paths (netwire -K,
# lab-frozen.patch), while every other packet passes: the receiver acknowledges the later DATA
# in gap blocks and its cumulative TSN ack stands still until the end. PMR 5 keeps both paths
# in use for the run (the timer backs off: 6 expiries take 6.3 s at RTO.min 100 ms). The
# `frozen_cum_ack` stall of issue 15: SACKs keep arriving, one TSN never gets acknowledged
# though packets as large pass on the same path.
run frozen_p20 "EAT_MSG=100 VERBOSE=0" "{\"scenario\": \"paced 20 ms, 100-byte messages, no path failure; the wire drops every copy of client message 100 (2 s in) on both paths\", $T, \"stall\": {\"cause\": \"frozen_cum_ack\", \"eaten_message\": 100}}" \
  40 100 5 20 20 -1 6
# Format variants of one short run: pcapng, nanosecond pcap, Linux cooked v1/v2, 96-byte snaplen.
run fmt "SETUP_S=4 VERBOSE=0 EXTRA_CAPS=pcapng,nsec,sll,sll2,snap96" "{\"scenario\": \"format variants, primary cut at 2 s\", $T, \"cause\": \"path 1 cut\"}" \
  40 100 2 20 50 2 3
# Bulk Linux TCP (no SCTP): 1000-byte writes back to back over 4 Mbit/s paths with a 30-frame
# queue, no failure, 2 s: full-size segments, for the `tcpbulk` speed benchmark
# (bench/compare.sh). Only its sender side is kept (below).
run tcp_bulk_p20 "MODE=tcp MSGLEN=1000 RATE_KBIT=4000 QLIMIT=30 VERBOSE=0" "{\"scenario\": \"bulk Linux TCP, 1000-byte writes, 4 Mbit/s, no failure\"}" \
  40 100 2 20 0 -1 2
# Head-of-line blocking: paced 5 ms (several messages in flight per 40 ms RTT), 100..300-byte
# messages (MSGLEN=100:300, lab-streams.patch), 20 ms one-way, 2 % random loss on both paths in
# both directions (netwire -L: DATA and SACKs), no path failure, SACK delay 40 ms, RTO.min 100,
# PMR 2, 4 s of sending; VERBOSE=1 so the server logs every delivery (sid, ssn, tsn, rcv_epoch).
# hol_s4_loss2 sends message i on stream i % 4 (STREAMS=4): a lost DATA chunk holds back only the
# later messages of its own stream. hol_s1_loss2 is the same with one stream (every message waits
# for every earlier one). hol_truth.py writes "hol" into the truth (see README.md).
run hol_s4_loss2 "STREAMS=4 LOSS=2 MSGLEN=100:300 VERBOSE=1" "{\"scenario\": \"4 ordered streams (message i on stream i % 4), paced 5 ms, 100-300-byte messages, 2 % random loss on both paths, no path failure: head-of-line blocking within a stream only\", $T}" \
  40 100 2 20 5 -1 4
run hol_s1_loss2 "STREAMS=1 LOSS=2 MSGLEN=100:300 VERBOSE=1" "{\"scenario\": \"1 ordered stream, paced 5 ms, 100-300-byte messages, 2 % random loss on both paths, no path failure: every message waits for every earlier one (the single-stream comparison of hol_s4_loss2)\", $T}" \
  40 100 2 20 5 -1 4
rm -f out/tcp_bulk_p20_receiver.pcap
for f in out/*_sender.* out/*_receiver.* out/*_truth.json out/*_measured.json; do
  [ -e "$f" ] || continue
  cp "$f" "$here/"
done
# Keep the stack's own log of each run (the truth for RTO and failover), compressed.
# hol_ runs also keep the server's log: its RECV lines are the delivery truth of hol_truth.py.
for f in out/*_client.log out/*_client_restart.log out/hol_*_server.log; do
  [ -e "$f" ] || continue
  gzip -c "$f" > "$here/$(basename "$f").gz"
done
ls -la "$here"
