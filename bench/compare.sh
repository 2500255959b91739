#!/usr/bin/env bash
# Speed benchmark: our CLI side by side with tshark and tcptrace on large generated captures.
#
# Builds deterministic captures of SIZE_MB (default 200; also 1000) by repeating lab traces of
# sample-traces with shifted times, SCTP tags and ports, and TCP ports (analyzer example
# make_big_capture): `sctp` (cut_p20_sack40_sender), `tcp` (tcp_loss2_p20_sender: 100-byte
# messages), `tcpbulk` (tcp_bulk_p20_sender: a bulk transfer of full-size segments, 7 times
# fewer packets per MB) and `mixed` (mixed_p20_cut5_rec8_sender: SCTP and TCP). Then runs every
# tool alternately, ROUNDS times (default 7: two busy threads on this VM vary by 20-60% run to run, so fewer rounds give a
# median that moves with the host), and writes bench/out/result_KIND_SIZE.md (wall, packets/s, MB/s, peak RSS,
# ratio to ours). Slow tshark runs on 1 GB run once (marked in the table).
#
# Kind `batch`: 200 captures of SIZE_MB/200 each (the SCTP sample traces in turn) in one folder,
# analysed with --jobs 1 and --jobs 2 (one capture per thread).
#
# Usage: bench/compare.sh [SIZE_MB] [KIND...]      e.g. bench/compare.sh 1000 sctp tcp
# Needs: tshark, capinfos (wireshark-common), tcptrace, python3 (apt-get install them).
# TSN=0 skips tshark with TSN analysis fields (minutes on 1 GB). PREV=BIN (and PREV2=BIN, with
# PREV_NAME / PREV2_NAME for their rows) times other builds of the CLI side by side, e.g. the
# build before an issue: `PREV=/tmp/old/sctp-analyzer PREV_NAME=65c13c6 bench/compare.sh 1000 sctp`.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/big_capture.sh
size=${1:-200}
shift || true
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(sctp tcp mixed)
rounds=${ROUNDS:-7}
out=bench/out
mkdir -p "$out"
cargo build --release --bin sctp-analyzer --example make_big_capture
rel=${CARGO_TARGET_DIR:-target}/release
bin=$rel/sctp-analyzer
gen=$rel/examples/make_big_capture
ours="$bin analyze --format json --no-progress"
once=""
[ "$size" -ge 1000 ] && once="@1"
for kind in "${kinds[@]}"; do
  if [ "$kind" = batch ]; then
    dir="$out/batch_${size}mb"
    if [ ! -d "$dir" ]; then
      mkdir -p "$dir"
      srcs=(sample-traces/cut_p20_sack40_sender.pcap sample-traces/sparse_sack200_sender.pcap
        sample-traces/spur_pmr1_rtomin30_sender.pcap sample-traces/spike_p20_rtomin100_sender.pcap)
      each=$(python3 -c "print($size / 200)")
      for i in $(seq -w 1 200); do
        "$gen" "${srcs[$((10#$i % 4))]}" "$dir/c$i.pcap" "$each" 2>/dev/null
      done
    fi
    packets=$(capinfos -Mc "$dir"/*.pcap | awk -F: '/Number of packets/{gsub(/ /,"",$2); n+=$2} END{print n}')
    cat "$dir"/*.pcap > /dev/null
    echo "== batch: 200 captures, $size MB in all ($packets packets)"
    python3 bench/timing.py "$dir" "$packets" "$rounds" "$out/result_batch_${size}.md" \
      "ours --jobs 2=$ours --jobs 2 $dir" "ours --jobs 1=$ours --jobs 1 $dir"
    continue
  fi
  big_capture "$gen" "$out" "$kind" "$size"
  echo "== $kind, $size MB: $big ($packets packets)"
  tools=("ours (2 threads)=$ours $big" "ours --jobs 1=$ours --jobs 1 $big")
  # PREV=BIN [PREV_NAME=...]: another build of the CLI side by side (the build before an issue,
  # whose budget is +10% of it), same command; PREV2 likewise.
  [ -n "${PREV:-}" ] && tools+=("${PREV_NAME:-previous build}=$PREV analyze --format json --no-progress $big")
  [ -n "${PREV2:-}" ] && tools+=("${PREV2_NAME:-second build}=$PREV2 analyze --format json --no-progress $big")
  case $kind in
    sctp)
      tools+=("tshark -z sctp,stat$once=tshark -q -z sctp,stat -r $big")
      [ "${TSN:-1}" = 1 ] && tools+=("tshark TSN analysis fields$once=tshark -r $big -o sctp.tsn_analysis:TRUE -T fields -e frame.number -e sctp.retransmission -e sctp.sack_rtt")
      ;;
    tcp | tcpbulk)
      tools+=("ours --no-tcp=$ours --no-tcp $big" "ours --jobs 1 --no-tcp=$ours --jobs 1 --no-tcp $big")
      tools+=("tcptrace -n -l -r=tcptrace -n -l -r $big")
      # tshark's TCP analysis takes minutes here (81 s at 200 MB): once, and CONV=0 skips it.
      [ "${CONV:-1}" = 1 ] && tools+=("tshark -z conv,tcp@1=tshark -q -z conv,tcp -r $big")
      ;;
    mixed)
      tools+=("ours --no-tcp=$ours --no-tcp $big")
      tools+=("tshark -z sctp,stat$once=tshark -q -z sctp,stat -r $big" "tcptrace -n -l -r=tcptrace -n -l -r $big")
      [ "${CONV:-1}" = 1 ] && tools+=("tshark -z conv,tcp@1=tshark -q -z conv,tcp -r $big")
      ;;
  esac
  python3 bench/timing.py "$big" "$packets" "$rounds" "$out/result_${kind}_${size}.md" "${tools[@]}"
done
