#!/usr/bin/env bash
# A real VXLAN capture: usrsctp (the lab's sctpgen) between two network namespaces whose only
# link is a VXLAN overlay (RFC 7348, the Linux kernel's vxlan device, UDP 4789) over a veth
# underlay. tcpdump records the underlay (what a traffic mirror delivers: every SCTP packet
# inside VXLAN inside UDP) and the overlay (the same packets bare) at once; the overlay capture is
# the truth the underlay's analysis must equal. Needs root, gcc, libusrsctp-dev, tcpdump and the
# kernel's vxlan module. Output: vxlan_underlay.pcap, vxlan_overlay.pcap (this directory).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lab=${LAB:-$here/../../../shared/lab}
tmp=$(mktemp -d /tmp/vxlan.XXXXXX)
A=vx_a_$$ B=vx_b_$$
cleanup() {
	ip netns pids "$A" 2>/dev/null | xargs -r kill 2>/dev/null || true
	ip netns pids "$B" 2>/dev/null | xargs -r kill 2>/dev/null || true
	ip netns del "$A" 2>/dev/null || true
	ip netns del "$B" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
gcc -O2 -w -o "$tmp/sctpgen" "$lab/sctpgen.c" -lusrsctp -lpthread
ip netns add "$A"
ip netns add "$B"
ip link add ua netns "$A" type veth peer name ub netns "$B"
for ns in "$A" "$B"; do ip netns exec "$ns" ip link set lo up; done
ip netns exec "$A" ip addr add 192.0.2.1/24 dev ua
ip netns exec "$B" ip addr add 192.0.2.2/24 dev ub
ip netns exec "$A" ip link set ua up
ip netns exec "$B" ip link set ub up
# The overlay: VNI 42, the IANA port; addresses as in the lab's path 1.
ip netns exec "$A" ip link add vx0 type vxlan id 42 dstport 4789 local 192.0.2.1 remote 192.0.2.2 dev ua
ip netns exec "$B" ip link add vx0 type vxlan id 42 dstport 4789 local 192.0.2.2 remote 192.0.2.1 dev ub
ip netns exec "$A" ip addr add 10.201.1.1/24 dev vx0
ip netns exec "$B" ip addr add 10.201.1.2/24 dev vx0
ip netns exec "$A" ip link set vx0 up
ip netns exec "$B" ip link set vx0 up
ip netns exec "$A" tcpdump -q -n -s 0 -i ua -w "$tmp/under.pcap" udp port 4789 2>/dev/null &
ip netns exec "$A" tcpdump -q -n -s 0 -i vx0 -w "$tmp/over.pcap" sctp 2>/dev/null &
sleep 1
ip netns exec "$B" "$tmp/sctpgen" -m server -l 10.201.1.2 -s 40 -k 2 -o 100 -h 500 > "$tmp/server.log" 2>&1 &
sleep 0.5
ip netns exec "$A" timeout 20 "$tmp/sctpgen" -m client -l 10.201.1.1 -r 10.201.1.2 -s 40 -k 2 -o 100 -h 500 \
	-i 20 -n 100 -T 3 > "$tmp/client.log" 2>&1 || true
sleep 1.5
ip netns pids "$A" | xargs -r kill -INT 2>/dev/null || true
sleep 1
cp "$tmp/under.pcap" "$here/vxlan_underlay.pcap"
cp "$tmp/over.pcap" "$here/vxlan_overlay.pcap"
ls -l "$here"/vxlan_*.pcap
