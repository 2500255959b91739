#!/usr/bin/env bash
# fmt_sender.pcap (a real usrsctp association on Ethernet) rewritten onto serial-line link types
# by tcpreplay's tcprewrite: Cisco HDLC (LINKTYPE_C_HDLC 104, its own --dlt=hdlc encoder with
# address 0x0F, control 0) and PPP (LINKTYPE_PPP 9, its user-DLT encoder with the link header
# FF 03 00 21: RFC 1662 address and control, protocol IPv4). truth.json: tshark's reading of
# each (link type, frames decoded as SCTP, chunk counts), which must equal the source's.
# Needs: tcprewrite (Debian tcpreplay), tshark, capinfos. Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")"
src=../fmt_sender.pcap
tcprewrite --dlt=hdlc --hdlc-address=15 --hdlc-control=0 -i "$src" -o fmt_sender_chdlc.pcap
tcprewrite --dlt=user --user-dlt=9 --user-dlink=0xff,0x03,0x00,0x21 -i "$src" -o fmt_sender_ppp.pcap
echo "[" > truth.json
sep=""
for f in "$src" fmt_sender_chdlc.pcap fmt_sender_ppp.pcap; do
  encap=$(capinfos -E "$f" | sed -n 's/^File encapsulation: *//p')
  frames=$(capinfos -c "$f" | sed -n 's/^Number of packets: *//p')
  sctp=$(tshark -r "$f" -Y sctp -T fields -e frame.number | wc -l)
  chunks=$(tshark -r "$f" -T fields -e sctp.chunk_type | tr ',' '\n' | grep -v '^$' | wc -l)
  printf '%s  {"file": "%s", "encapsulation": "%s", "frames": %s, "sctp_frames": %s, "sctp_chunks": %s}' \
    "$sep" "$(basename "$f")" "$encap" "$frames" "$sctp" "$chunks" >> truth.json
  sep=$',\n'
done
printf '\n]\n' >> truth.json
