#!/usr/bin/env bash
# Real NFLOG captures (linktype 239, `tcpdump -i nflog:N`) of a real SCTP association: the IP
# packets of fmt_sender.pcap (the usrsctp lab's run, both directions) sent again in their own
# timing through a raw socket (IP_HDRINCL) in a network namespace made here, out of one end of a
# veth pair into the other, and logged by nftables twice:
# - on the way out (output hook, `log group 5`): no kernel timestamp in the frames, whose record
#   times are when libpcap read each batch: nflog_fmt_output.pcap;
# - on the way in (prerouting on the other end, `log group 6`, then dropped so that no stack
#   answers), with receive timestamps on (a socket holding SO_TIMESTAMP): the frames carry the
#   kernel's NFULA_TIMESTAMP: nflog_fmt.pcap.
# Truth beside them: counts per tshark (equal to the source capture's) and the replay's timing
# against the source's. Needs root, ip, nft, tcpdump, tshark, python3.
set -euo pipefail
cd "$(dirname "$0")"
ns=sctp-nflog-$$
tmp=$(mktemp -d)
cleanup() { ip netns del "$ns" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
ip netns add "$ns"
ip netns exec "$ns" ip link set lo up
# The lab's addresses (10.201.1.x, 10.201.2.x) routed out of v0, their neighbour entries
# pointing at v1 (which takes the frames in as its own).
ip netns exec "$ns" ip link add v0 type veth peer name v1
ip netns exec "$ns" ip link set v0 up
ip netns exec "$ns" ip link set v1 up
ip netns exec "$ns" ip addr add 10.201.0.254/16 dev v0
mac=$(ip netns exec "$ns" cat /sys/class/net/v1/address)
for a in 10.201.1.1 10.201.1.2 10.201.2.1 10.201.2.2; do
  ip netns exec "$ns" ip neigh add "$a" lladdr "$mac" dev v0 nud permanent
done
ip netns exec "$ns" nft add table inet cap
ip netns exec "$ns" nft 'add chain inet cap out { type filter hook output priority 0; }'
ip netns exec "$ns" nft add rule inet cap out meta l4proto sctp log group 5
ip netns exec "$ns" nft 'add chain inet cap pre { type filter hook prerouting priority 0; }'
ip netns exec "$ns" nft add rule inet cap pre iifname v1 meta l4proto sctp log group 6 drop
ip netns exec "$ns" timeout 12 tcpdump -i nflog:5 -U -w "$tmp/out.pcap" 2>/dev/null &
dump5=$!
ip netns exec "$ns" timeout 12 tcpdump -i nflog:6 -U -w "$tmp/in.pcap" 2>/dev/null &
dump6=$!
sleep 1
ip netns exec "$ns" python3 - fmt_sender.pcap <<'PY'
import socket, struct, sys, time
raw = open(sys.argv[1], "rb").read()
assert raw[:4] == b"\xd4\xc3\xb2\xa1" and struct.unpack("<I", raw[20:24])[0] == 1, "LE pcap, Ethernet"
# Receive timestamps on while it exists (SO_TIMESTAMP, 29 on Linux): the prerouting log
# carries them.
stamps = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
stamps.setsockopt(socket.SOL_SOCKET, 29, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
s.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
at, first, start = 24, None, time.monotonic()
while at < len(raw):
    sec, usec, caplen, _ = struct.unpack("<IIII", raw[at:at + 16])
    frame = raw[at + 16:at + 16 + caplen]
    at += 16 + caplen
    if frame[12:14] != b"\x08\x00":
        continue
    ip = frame[14:14 + struct.unpack("!H", frame[16:18])[0]]
    t = sec + usec / 1e6
    first = t if first is None else first
    wait = start + (t - first) - time.monotonic()
    if wait > 0:
        time.sleep(wait)
    s.sendto(ip, (socket.inet_ntoa(ip[16:20]), 0))

PY
sleep 2
kill "$dump5" "$dump6" 2>/dev/null || true
wait "$dump5" "$dump6" 2>/dev/null || true
cp "$tmp/in.pcap" nflog_fmt.pcap
cp "$tmp/out.pcap" nflog_fmt_output.pcap
count() { tshark -r "$1" -Y "$2" 2>/dev/null | wc -l; }
chunks() { tshark -r "$1" -T fields -e sctp.chunk_type 2>/dev/null | tr ',' '\n' | grep -c .; }
# Frames with the kernel's timestamp (NFULA_TIMESTAMP, TLV type 3).
stamped() { tshark -r "$1" -Y "nflog.tlv_type == 3" 2>/dev/null | wc -l; }
# The kernel's timestamps (or the record times) against the source's, frame by frame: the
# largest difference of the relative times, in ms.
skew() {
  python3 - "$1" "$2" <<'PY'
import struct, subprocess, sys
def record_times(path):
    out = subprocess.run(["tshark", "-r", path, "-T", "fields", "-e", "frame.time_epoch"], capture_output=True, text=True).stdout.split()
    return [float(x) for x in out]
def kernel_times(path):
    # NFLOG frames of a little-endian pcap: 4-byte header, TLVs (length, type: host order, LE
    # here), NFULA_TIMESTAMP (3) = seconds and microseconds, 64 bits each, network order.
    raw, at, out = open(path, "rb").read(), 24, []
    while at < len(raw):
        caplen = struct.unpack("<I", raw[at + 8:at + 12])[0]
        f, i = raw[at + 16:at + 16 + caplen], 4
        at += 16 + caplen
        while i + 4 <= len(f):
            n, ty = struct.unpack("<HH", f[i:i + 4])
            if ty & 0x3FFF == 3:
                sec, usec = struct.unpack(">QQ", f[i + 4:i + 20])
                out.append(sec + usec / 1e6)
                break
            i += (n + 3) & ~3
    return out
rel = lambda t: [x - t[0] for x in t]
src = rel(record_times("fmt_sender.pcap"))
got = rel(kernel_times(sys.argv[1]) if sys.argv[2] == "kernel" else record_times(sys.argv[1]))
assert len(got) == len(src), (len(got), len(src))
print(round(max(abs(a - b) for a, b in zip(src, got)) * 1e3, 3))
PY
}
truth() {
  cat <<JSON
{
  "what": "fmt_sender.pcap's IP packets sent again through a raw socket in a namespace and logged by nftables $2, captured with tcpdump -i nflog:$3 (generate-nflog.sh)",
  "source": "fmt_sender.pcap",
  "linktype": 239,
  "packets": $(count "$1" frame),
  "sctp_packets": $(count "$1" sctp),
  "sctp_chunks": $(chunks "$1"),
  "data_chunks": $(tshark -r "$1" -T fields -e sctp.data_tsn 2>/dev/null | tr ',' '\n' | grep -c .),
  "frames_with_kernel_timestamp": $(stamped "$1"),
  "max_kernel_time_skew_from_source_ms": $( [ "$(stamped "$1")" -gt 0 ] && skew "$1" kernel || echo null),
  "max_record_time_skew_from_source_ms": $(skew "$1" record),
  "source_sctp_packets": $(count fmt_sender.pcap sctp),
  "source_sctp_chunks": $(chunks fmt_sender.pcap)
}
JSON
}
truth nflog_fmt.pcap "on the way in (prerouting, receive timestamps on)" 6 > nflog_fmt_truth.json
truth nflog_fmt_output.pcap "on the way out (output hook)" 5 > nflog_fmt_output_truth.json
cat nflog_fmt_truth.json nflog_fmt_output_truth.json
