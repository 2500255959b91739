#!/usr/bin/env bash
# fmt_sender.pcap (a real usrsctp association) written by Wireshark's editcap (4.0.17) in the
# old tcpdump variants of classic pcap that keep a standard or "modified" magic but other record
# headers: Nokia IPSO (20 bytes), Red Hat 6.1 (24, standard magic), SuSE 6.3 (28, modified
# magic). truth.json: each file's type as capinfos names it, its frames and the SCTP frames
# tshark decodes (the source's 122), and the variant name the analyzer's warning gives.
# Needs: editcap, capinfos, tshark. Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")"
src=../fmt_sender.pcap
variants=(
  "nokiapcap 20 Nokia IPSO tcpdump"
  "rh6_1pcap 24 Red Hat 6.1 tcpdump"
  "suse6_3pcap 28 SuSE 6.3 tcpdump"
)
echo "[" > truth.json
sep=""
for v in "${variants[@]}"; do
  read -r fmt hdr name <<< "$v"
  out="fmt_sender_$fmt.pcap"
  editcap -F "$fmt" "$src" "$out"
  type=$(capinfos -t "$out" | sed -n 's/^File type: *//p')
  frames=$(capinfos -c "$out" | sed -n 's/^Number of packets: *//p')
  sctp=$(tshark -r "$out" -Y sctp -T fields -e frame.number 2>/dev/null | wc -l)
  printf '%s  {"file": "%s", "capinfos_file_type": "%s", "frames": %s, "sctp_frames": %s, "record_header_len": %s, "analyzer_names": "%s"}' \
    "$sep" "$out" "$type" "$frames" "$sctp" "$hdr" "$name" >> truth.json
  sep=$',\n'
done
printf '\n]\n' >> truth.json
