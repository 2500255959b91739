#!/usr/bin/env python3
"""Times commands alternately (round after round, so that a noisy machine hits every tool alike)
and prints wall time, packets/s, MB/s, peak RSS, CPU time (user + system) and each tool's
ratios to the first command.

Usage: timing.py CAPTURE_OR_DIR PACKETS ROUNDS OUT.md NAME=CMD [NAME=CMD ...]
Each CMD runs through `sh -c` with stdout to /dev/null; peak RSS comes from wait4's rusage.
A command given as NAME@1=CMD runs in the first round only (slow tools on big captures).
"""
import os
import statistics
import subprocess
import sys
import time


def run(cmd):
    t0 = time.perf_counter()
    p = subprocess.Popen(["sh", "-c", cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"command failed ({status}): {cmd}\n{err}")
    # Wall time, peak RSS (KiB) and CPU time (user + system, all threads).
    return wall, ru.ru_maxrss, ru.ru_utime + ru.ru_stime


def main():
    capture, packets, rounds, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    tools = []
    for arg in sys.argv[5:]:
        name, cmd = arg.split("=", 1)
        once = name.endswith("@1")
        tools.append((name.removesuffix("@1"), cmd, once))
    if os.path.isdir(capture):
        size = sum(os.path.getsize(os.path.join(capture, f)) for f in os.listdir(capture))
    else:
        size = os.path.getsize(capture)
    walls = {n: [] for n, _, _ in tools}
    cpus = {n: [] for n, _, _ in tools}
    rss = {n: 0 for n, _, _ in tools}
    for r in range(rounds):
        for name, cmd, once in tools:
            if once and r > 0:
                continue
            w, m, c = run(cmd)
            walls[name].append(w)
            cpus[name].append(c)
            rss[name] = max(rss[name], m)
            print(f"  round {r + 1}: {name:<28} {w:8.3f} s  {m / 1024:8.1f} MB", file=sys.stderr, flush=True)
    base = statistics.median(walls[tools[0][0]])
    base_cpu = statistics.median(cpus[tools[0][0]])
    lines = [
        f"capture `{os.path.basename(capture)}`: {size / 1e6:.0f} MB, {packets} packets; "
        f"median of {rounds} alternating rounds (tools marked 1x ran once)",
        "",
        "| tool | wall s (median) | runs | Mpkt/s | MB/s | peak RSS MB | time / ours | CPU s (median) | CPU / ours |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, _, _ in tools:
        m = statistics.median(walls[name])
        c = statistics.median(cpus[name])
        lines.append(
            f"| {name} | {m:.3f} | {len(walls[name])} | {packets / m / 1e6:.2f} | {size / m / 1e6:.0f} | "
            f"{rss[name] / 1024:.1f} | {m / base:.2f}x | {c:.3f} | {c / base_cpu:.2f}x |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    with open(out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
