#!/usr/bin/env bash
# The first 5 frames of fmt_sender.pcap (a real usrsctp association: INIT, INIT-ACK, COOKIE-ECHO,
# COOKIE-ACK, DATA) written by Wireshark's editcap in capture formats of other tools, which the
# analyzer does not read but names (capture::foreign), and truth.json: each file's format as
# capinfos names it and as the analyzer's error must name it.
# (Observer is left out: capinfos 4.0.17 cannot read back the file its editcap writes.)
# Needs: editcap and capinfos (Debian wireshark-common). Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")"
src=../fmt_sender.pcap
# editcap -F name, the file's extension, the name the analyzer's error gives.
formats=(
  "snoop snoop Sun snoop (Solaris)"
  "netmon1 netmon1.cap Microsoft Network Monitor 1.x"
  "netmon2 netmon2.cap Microsoft Network Monitor 2.x"
  "ngsniffer enc Sniffer (DOS)"
  "ngwsniffer_2_0 caz NetXray / Sniffer (Windows)"
  "nettl trc0 HP-UX nettl"
  "visual vn Visual Networks"
  "5views 5vw InfoVista 5View"
  "k12text txt Tektronix K12 text"
  "lanalyzer tr1 Novell LANalyzer"
)
echo "[" > truth.json
sep=""
for f in "${formats[@]}"; do
  read -r fmt ext name <<< "$f"
  out="fmt_sender_5.$ext"
  editcap -F "$fmt" -r "$src" "$out" 1-5
  type=$(capinfos -t "$out" | sed -n 's/^File type: *//p')
  packets=$(capinfos -c "$out" | sed -n 's/^Number of packets: *//p')
  printf '%s  {"file": "%s", "editcap_format": "%s", "capinfos_file_type": "%s", "capinfos_packets": %s, "analyzer_names": "%s"}' \
    "$sep" "$out" "$fmt" "$type" "$packets" "$name" >> truth.json
  sep=$',\n'
done
printf '\n]\n' >> truth.json
