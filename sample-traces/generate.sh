#!/usr/bin/env bash
# Regenerates the sample traces with the lab (../shared/lab): real usrsctp associations between
# two network namespaces that the lab creates and deletes. Needs root, gcc, libusrsctp-dev,
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
pat=${1:-.}
run() { # name "ENV=.." 'TRUTH_EXTRA' gen.sh args...
  local name=$1 envs=$2 extra=$3; shift 3
  echo "$name" | grep -qE "$pat" || return 0
  echo "=== $name: $envs gen.sh $*"
  env RTPRIO=20 $envs TRUTH_EXTRA="$extra" ./gen.sh "$@" "out/$name"
  python3 measure.py "out/$name" >/dev/null || true
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
# Format variants of one short run: pcapng, nanosecond pcap, Linux cooked v1/v2, 96-byte snaplen.
run fmt "SETUP_S=4 VERBOSE=0 EXTRA_CAPS=pcapng,nsec,sll,sll2,snap96" "{\"scenario\": \"format variants, primary cut at 2 s\", $T, \"cause\": \"path 1 cut\"}" \
  40 100 2 20 50 2 3
# Bulk Linux TCP (no SCTP): 1000-byte writes back to back over 4 Mbit/s paths with a 30-frame
# queue, no failure, 2 s: full-size segments, for the `tcpbulk` speed benchmark
# (bench/compare.sh). Only its sender side is kept (below).
run tcp_bulk_p20 "MODE=tcp MSGLEN=1000 RATE_KBIT=4000 QLIMIT=30 VERBOSE=0" "{\"scenario\": \"bulk Linux TCP, 1000-byte writes, 4 Mbit/s, no failure\"}" \
  40 100 2 20 0 -1 2
rm -f out/tcp_bulk_p20_receiver.pcap
for f in out/*_sender.* out/*_receiver.* out/*_truth.json out/*_measured.json; do
  [ -e "$f" ] || continue
  cp "$f" "$here/"
done
# Keep the stack's own log of each run (the truth for RTO and failover), compressed.
for f in out/*_client.log; do
  [ -e "$f" ] || continue
  gzip -c "$f" > "$here/$(basename "$f").gz"
done
ls -la "$here"
