#!/usr/bin/env bash
# Regenerates lk_zerowin_rcvbuf: a Linux kernel SCTP (6.1, in User-mode Linux) zero-window stall,
# with ../shared/lab-linux (lksctp-gen.sh) and lab-linux-stalls.patch (lkgen -R STOP:RESUME: the
# server stops reading STOP s after the first message and resumes at RESUME; lkgen -B: the
# server's SO_RCVBUF). Needs what lab-linux's README lists (user-mode-linux, tcpdump, tshark...).
# All traffic stays inside the UML guest's namespaces.
#
# The server's SO_RCVBUF is 32768 (the kernel doubles it); 100-byte messages every 5 ms; it stops
# reading 1 s after the first message and reads again 2 s later. Linux counts each received
# chunk's whole buffer (skb truesize) against SO_RCVBUF: the buffer fills within ~0.3 s and the
# kernel announces a_rwnd 0 (sctp_assoc_rwnd_decrease: rwnd_press) until the reader drains it.
# Truth: one zero_window stall of the client's data, from the buffer filling to the reader's
# resumption; after it the window closes and opens again for a few ms at a time while the reader
# catches up (flow control, not a stall); no frozen_cum_ack (the window is what held the data).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lab=${LAB_LINUX:-$here/../../shared/lab-linux}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$lab"/. "$work/"
chmod -R u+w "$work"
rm -f "$work/lkgen" "$work/atcmd"
(cd "$work" && patch -s -p1 < "$here/lab-linux-stalls.patch")
name=lk_zerowin_rcvbuf
out="$work/out/$name"
mkdir -p "$work/out"
RTO_INIT=1000 RTO_MAX=1000 WIRECAP=0 STOP_READ=1:3 RCVBUF=32768 \
  "$work/lksctp-gen.sh" 40 100 5 10 5 -1 4 "$out"
python3 - "$out" <<'EOF'
import json, re, subprocess, sys
p = sys.argv[1]
t = json.load(open(p + "_truth.json"))
log = open(p + "_server.log").read()
stop = float(re.search(r"^(\S+) STOP_READ", log, re.M).group(1))
resume = float(re.search(r"^(\S+) RESUME_READ", log, re.M).group(1))
def first_epoch(pcap):
    out = subprocess.run(["tshark", "-r", pcap, "-c", "1", "-T", "fields", "-e",
                          "frame.time_epoch"], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[0])
t["scenario"] = ("Linux 6.1: 100-byte messages every 5 ms, no path failure; the server's "
                 "SO_RCVBUF is 32768 and it stops reading 1 s after the first message for 2 s")
t["stall"] = {"cause": "zero_window", "by": "server"}
t["stop_read_epoch"] = stop
t["resume_read_epoch"] = resume
for side in ("sender", "receiver"):
    f0 = first_epoch(f"{p}_{side}.pcap")
    t[f"stop_read_rel_{side}_capture_s"] = round(stop - f0, 6)
    t[f"resume_read_rel_{side}_capture_s"] = round(resume - f0, 6)
json.dump(t, open(p + "_truth.json", "w"), indent=1)
EOF
for f in sender.pcap receiver.pcap truth.json; do cp "${out}_$f" "$here/${name}_$f"; done
gzip -9c "${out}_client.log" > "$here/${name}_client.log.gz"
gzip -9c "${out}_server.log" > "$here/${name}_server.log.gz"
echo "wrote $here/${name}_*"
