# Sourced by bench/compare.sh and bench/attribute.sh: the deterministic benchmark capture of a
# kind (a lab trace of sample-traces repeated by the analyzer example make_big_capture with
# shifted times, SCTP tags and ports, and TCP ports).
#
# big_capture GEN OUT_DIR KIND SIZE_MB: makes OUT_DIR/KIND_SIZEmb.pcap unless it exists, loads
# it into the page cache, and sets `big` (its path) and `packets` (its packet count, capinfos).
big_capture() {
  local gen=$1 dir=$2 kind=$3 size=$4 src
  case $kind in
    sctp) src=sample-traces/cut_p20_sack40_sender.pcap ;;
    tcp) src=sample-traces/tcp_loss2_p20_sender.pcap ;;
    tcpbulk) src=sample-traces/tcp_bulk_p20_sender.pcap ;;
    mixed) src=sample-traces/mixed_p20_cut5_rec8_sender.pcap ;;
    *) echo "unknown kind $kind (sctp, tcp, tcpbulk, mixed, batch)" >&2; exit 2 ;;
  esac
  big="$dir/${kind}_${size}mb.pcap"
  [ -s "$big" ] || "$gen" "$src" "$big" "$size"
  packets=$(capinfos -Mc "$big" | awk -F: '/Number of packets/{gsub(/ /,"",$2); print $2}')
  cat "$big" > /dev/null # page cache: every tool reads from memory
}
