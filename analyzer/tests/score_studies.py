#!/usr/bin/env python3
"""Path.Max.Retrans of the study captures against their truth: right / wrong / null.

Usage: score_studies.py CLI [FOLDER]
  CLI     the sctp-analyzer binary (reads `analyze --format json`)
  FOLDER  the studies (default: sample-traces/studies, from the repository's top)
Each `*_sender.pcap*` with a `_truth.json` giving `path_max_retrans` and a real (not spurious)
failover counts once: its first such direction's `path_max_retrans` against the truth."""
import glob, json, os, subprocess, sys

cli = sys.argv[1]
folder = sys.argv[2] if len(sys.argv) > 2 else "sample-traces/studies"
counts = {"right": 0, "wrong": 0, "null": 0}
for f in sorted(glob.glob(os.path.join(folder, "*", "*_sender.pcap*"))):
    truth_path = f.split("_sender.pcap")[0] + "_truth.json"
    if not os.path.exists(truth_path):
        continue
    truth = json.load(open(truth_path))
    want = truth.get("path_max_retrans") or (truth.get("configured") or {}).get("path_max_retrans")
    if want is None:
        continue
    out = subprocess.run([cli, "analyze", "--format", "json", f], capture_output=True, text=True)
    cap = json.loads(out.stdout)["captures"][0]
    dirs = [d for a in cap["associations"] for d in a["directions"]
            if any(not x.get("spurious") for x in d.get("failovers") or [])]
    if not dirs:
        continue
    got = dirs[0].get("path_max_retrans")
    kind = "null" if got is None else ("right" if got == want else "wrong")
    counts[kind] += 1
    if kind == "wrong":
        print(f"WRONG {os.path.basename(f)}: got {got} want {want}")
print(f"studies: Path.Max.Retrans {counts['right']} right / {counts['wrong']} wrong / "
      f"{counts['null']} null of {sum(counts.values())} captures with a failover")
