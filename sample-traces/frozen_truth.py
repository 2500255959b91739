#!/usr/bin/env python3
"""frozen_truth.py PREFIX - for generate.sh: the refused message of a lab run whose wire drops
every copy of one client message (netwire -K, gen.sh EAT_MSG, lab-frozen.patch), written into
PREFIX_truth.json's "stall".

Inputs (same run; pcap and wire log timestamps share the host's realtime clock):
  PREFIX_wire.log     netwire's drop lines: "EPOCH DROP path=P dir=D reason=eat len=N ...
                      DATA(tsn=T,len=L)"
  PREFIX_sender.pcap  the sender capture (its first frame's time is the capture's zero)

Adds: eaten_tsn (the TSN of the dropped message's DATA chunk), drops (frames the wire dropped
for it, every path and copy), first_drop_rel_sender_capture_s / last_drop_rel_sender_capture_s
(seconds from the sender capture's first frame), drop_paths (the paths they were sent on)."""
import json
import re
import struct
import sys


def first_ts(pcap):
    with open(pcap, "rb") as f:
        head = f.read(24)
        magic = struct.unpack("<I", head[:4])[0]
        endian, nano = {0xA1B2C3D4: ("<", False), 0xA1B23C4D: ("<", True),
                        0xD4C3B2A1: (">", False), 0x4D3CB2A1: (">", True)}[magic]
        sec, frac = struct.unpack(endian + "II", f.read(8))
        return sec + frac / (1e9 if nano else 1e6)


def main(prefix):
    drops = []
    with open(prefix + "_wire.log") as f:
        for line in f:
            if "reason=eat" not in line:
                continue
            t = float(line.split()[0])
            path = int(re.search(r"path=(\d+)", line).group(1))
            tsns = re.findall(r"DATA\(tsn=(\d+)", line)
            drops.append((t, path, [int(x) for x in tsns]))
    if not drops:
        sys.exit(f"{prefix}_wire.log: no eat drops")
    common = set(drops[0][2])
    for _, _, tsns in drops[1:]:
        common &= set(tsns)
    if len(common) != 1:
        sys.exit(f"{prefix}_wire.log: the dropped frames share no single TSN: {common}")
    t0 = first_ts(prefix + "_sender.pcap")
    truth_path = prefix + "_truth.json"
    with open(truth_path) as f:
        truth = json.load(f)
    stall = truth.setdefault("stall", {})
    stall.update({
        "eaten_tsn": common.pop(),
        "drops": len(drops),
        "first_drop_rel_sender_capture_s": round(drops[0][0] - t0, 6),
        "last_drop_rel_sender_capture_s": round(drops[-1][0] - t0, 6),
        "drop_paths": sorted({p for _, p, _ in drops}),
    })
    with open(truth_path, "w") as f:
        json.dump(truth, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
