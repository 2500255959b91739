#!/usr/bin/env bash
# A real DTLS 1.2 handshake and one message on loopback (root: tcpdump on lo), the capture a
# WebRTC data channel's SCTP hides in (RFC 8261): sample-traces/dtls_loopback.pcap and its truth
# (packets tshark decodes as DTLS). Needs openssl, tcpdump, tshark.
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/k.pem" -out "$tmp/c.pem" -days 1 -subj /CN=dtls-sample 2>/dev/null
timeout 8 tcpdump -i lo -U -w "$tmp/dtls.pcap" udp port 4433 2>/dev/null &
dump=$!
sleep 1
timeout 5 openssl s_server -dtls1_2 -accept 4433 -cert "$tmp/c.pem" -key "$tmp/k.pem" -quiet > /dev/null 2>&1 &
sleep 1
(echo hello; sleep 1) | timeout 3 openssl s_client -dtls1_2 -connect 127.0.0.1:4433 -quiet > /dev/null 2>&1 || true
wait "$dump" || true
cp "$tmp/dtls.pcap" dtls_loopback.pcap
packets=$(tshark -r dtls_loopback.pcap | wc -l)
dtls=$(tshark -r dtls_loopback.pcap -Y dtls | wc -l)
cat > dtls_loopback_truth.json <<JSON
{
  "what": "DTLS 1.2 handshake and one message on loopback: openssl s_server / s_client -dtls1_2, tcpdump -i lo udp port 4433 (generate-dtls.sh)",
  "openssl": "$(openssl version)",
  "packets": $packets,
  "dtls_packets_tshark": $dtls,
  "udp_flows": 1
}
JSON
cat dtls_loopback_truth.json
