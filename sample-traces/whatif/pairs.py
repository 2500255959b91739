#!/usr/bin/env python3
"""What-if pairs (issue 14 item 4): the failover what-if of a base lab capture (../shared/captures,
not committed) against the failover the analyzer measures in a lab run made with the proposed
setting (here). Usage: python3 sample-traces/whatif/pairs.py [SCTP_ANALYZER]"""
import json, re, subprocess, sys
import os
HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "captures"))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "target", "release", "sctp-analyzer")
def fos(path):
    d = json.loads(subprocess.run([BIN, "analyze", "--format", "json", path], capture_output=True, text=True).stdout)
    out = []
    for a in d["captures"][0]["associations"]:
        for dd in a["directions"]:
            for fo in dd["failovers"]:
                out.append(fo)
    return out
pairs = [
 ("linux", SHARED + "/lab-linux/lk_default_cut_sender.pcap", "RTO.min 100", os.path.join(HERE, "wi_lk_default_cut_rtomin100_sender.pcap.gz")),
 ("linux", SHARED + "/lab-linux/lk_pf0_sack40_rtomin100_pmr2_sender.pcap", "PF", os.path.join(HERE, "wi_lk_pf0_sack40_rtomin100_pmr2_pf_sender.pcap.gz")),
 ("linux", SHARED + "/lab-linux/lk_sparse_sack200_pf0_sender.pcap", "PF", os.path.join(HERE, "wi_lk_sparse_sack200_pf_sender.pcap.gz")),
 ("linux", SHARED + "/lab-linux/lk_msg1200_i5_pf0_sender.pcap", "PF", os.path.join(HERE, "wi_lk_msg1200_i5_pf_sender.pcap.gz")),
 ("linux", SHARED + "/lab-linux/lk_failback_pf0_sender.pcap", "PF", os.path.join(HERE, "wi_lk_failback_pf0_pf_sender.pcap.gz")),
 ("linux", SHARED + "/lab-linux/lk_sockopt_pf0_sack40_rtomin100_pmr2_sender.pcap", "PF", os.path.join(HERE, "wi_lk_sockopt_pf0_sack40_pf_sender.pcap.gz")),
 ("usrsctp", SHARED + "/lab/sparse_sack200_sender.pcap", "PF", os.path.join(HERE, "wi_us_sparse_sack200_pf_sender.pcap.gz")),
 ("usrsctp", SHARED + "/lab/sparse_sack40_sender.pcap", "PF", os.path.join(HERE, "wi_us_sparse_sack40_pf_sender.pcap.gz")),
]
for stack, base, kind, wi in pairs:
    if not os.path.exists(base):
        print(stack, os.path.basename(base), "skipped: base capture absent"); continue
    b = [f for f in fos(base) if not f["spurious"]][0]
    rec = b["recommendation"]
    m = re.search(r"with PF[^;]*?about ([\d.]+) s" if kind == "PF" else r"with RTO\.min 100 ms[^;]*?about ([\d.]+) s", rec)
    pred = float(m.group(1)) * 1000
    try:
        w = fos(wi)
    except Exception as e:
        print(stack, base.split("/")[-1], kind, "pred", pred, "no run", e); continue
    real = [f for f in w if not f["spurious"]]
    spur = [f for f in w if f["spurious"]]
    meas = real[0]["failover_ms"] if real else None
    err = (meas - pred) / pred * 100 if meas else None
    print(f"{stack:8} {base.split('/')[-1]:40} {kind:12} base {b['failover_ms']:8.1f}  predicted {pred:7.1f}  measured {meas}  err {err if err is None else round(err,1)}%  spurious {[(round(f['failover_ms'],1), f.get('cause')) for f in spur]}")
