#!/usr/bin/env python3
"""Campaign runner: makes a study's captures with the usrsctp lab or the Linux lab, one run at a
time.

    python3 sample-traces/studies/campaign.py CAMPAIGN [--out DIR] [--lab DIR]
                                              [--only REGEX] [--repetitions N] [--dry-run]

CAMPAIGN is the name of a campaign defined below (CAMPAIGNS: `eklund`, `eklund-linux`, ...) or a
JSON file with the same keys:

    name         run names start with it; the default output folder is studies/NAME
    about        one line, copied into campaign.json
    lab          "usrsctp" (default: ../shared/lab, gen.sh) or "linux" (the Linux kernel's SCTP
                 in User-mode Linux: ../shared/lab-linux, lksctp-gen.sh, same seven arguments)
    args         the seven numeric arguments of the lab's gen.sh / lksctp-gen.sh, each a value
                 or a list (a list is a grid axis): sack_ms, rto_min_ms, pmr, delay_ms,
                 interval_ms, fail_s, duration_s
    env          the lab script's environment variables (gen.sh: VERBOSE, RTPRIO, SACK_FREQ,
                 LOSS, ...; lksctp-gen.sh: PF_ENABLE, PF_RETRANS, HB_MS, MSGLEN, RTO_INIT, ...),
                 each a value or a list (a grid axis too)
    repetitions  runs per grid point (r1, r2, ...); with the usrsctp lab repetition k runs with
                 SEED=k unless env sets SEED (gen.sh's seed is netwire's random-loss seed; the
                 Linux lab has no seed)
    run_name     format of a run's name, fields: name, rep, every args key, every env key
                 (default: NAME + one _LABELVALUE per grid axis + _rREP)
    truth_extra  JSON object merged into each run's truth (gen.sh TRUTH_EXTRA; with the Linux
                 lab the runner merges it); the runner adds campaign, run and repetition
    keep         what to keep of a run: ["sender"] (default), also "receiver"
    patches      lab patches to apply to the lab copy, paths relative to sample-traces/

Each run goes through ./gen.sh (./lksctp-gen.sh) in a temporary copy of the lab (as
sample-traces/generate.sh does: binaries are built there). The Linux lab's truth is kept as it
writes it (configured values, sysctls, the kernel's events, T3 / delayed-SACK expiries, per-path
RTO and state) plus the runner's keys and `campaign_checks` (client start and cut lateness, the
T3 expiries' lateness against the RTO in force, host load); a run whose association never came
up (the lab's occasional 2-frame capture) is retried once. Kept per run in the output folder:
RUN_sender.pcap.gz (gzip, mtime 0) and RUN_truth.json (the lab's truth; its "files" says what
was kept); receiver capture, logs and wire log (Linux: also the guest folder) are dropped. The truth file is written last, so a run is done when both files
exist: a rerun skips those (resumable) and redoes the rest. A run that fails (gen.sh exit
status, missing output, no logged cut when one was scheduled, timeout; with the Linux lab also
an association that never came up, after its retry) is appended to failures.txt with the tail
of the lab script's output, and the campaign goes on. Progress goes to stdout. Needs root
(network namespaces) and the lab's tools (see ../shared/lab/README.md,
../shared/lab-linux/README.md); the lab's namespace names are fixed, so a lock file keeps
campaigns from running side by side.
"""

import argparse
import copy
import datetime
import fcntl
import gzip
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.dirname(HERE)
DEFAULT_LAB = os.path.normpath(os.path.join(SAMPLES, "..", "..", "shared", "lab"))
DEFAULT_LAB_LINUX = os.path.normpath(os.path.join(SAMPLES, "..", "..", "shared", "lab-linux"))
# The lab kinds: their script (same seven arguments + PREFIX) and default folder.
LABS = {"usrsctp": ("gen.sh", DEFAULT_LAB), "linux": ("lksctp-gen.sh", DEFAULT_LAB_LINUX)}
LOCK = "/tmp/sctp-lab-campaign.lock"

# gen.sh SACK_MS RTO_MIN_MS PATH_MAX_RETRANS DELAY_MS INTERVAL_MS FAIL_S DURATION_S PREFIX
ARGS = ["sack_ms", "rto_min_ms", "pmr", "delay_ms", "interval_ms", "fail_s", "duration_s"]
LABELS = {"sack_ms": "sack", "rto_min_ms": "rtomin", "pmr": "pmr", "delay_ms": "d",
          "interval_ms": "iv", "fail_s": "fail", "duration_s": "dur"}

CAMPAIGNS = {
    # Eklund, Brunstrom, Grinnemo: the SACK delay inflates the failover time of sparse traffic
    # (RTT samples include it, so the RTO grows, and failover takes PMR + 1 expiries of it); the
    # gap closes as the traffic gets denser (every second packet is SACKed at once). Paper-like
    # path: 20 ms one way (RTT 40 ms), RTO.min 100 ms, Path.Max.Retrans 2; primary cut 2 s after
    # the client starts, 6 s of sending so the slowest failover (SACK delay 200 ms) completes.
    "eklund": {
        "name": "eklund",
        "about": "failover time against message interval per SACK delay (Eklund, Brunstrom, "
                 "Grinnemo); usrsctp lab, RTT 40 ms, RTO.min 100 ms, PMR 2, primary cut at 2 s",
        "args": {"sack_ms": [0, 40, 200], "rto_min_ms": 100, "pmr": 2, "delay_ms": 20,
                 "interval_ms": [10, 30, 50, 90], "fail_s": 2, "duration_s": 6},
        "env": {"VERBOSE": 0, "RTPRIO": 20},
        "repetitions": 3,
        "run_name": "{name}_sack{sack_ms}_iv{interval_ms}_r{rep}",
        "truth_extra": {"scenario": "Eklund campaign: paced messages, primary path cut 2 s after "
                                    "the client starts, failover to path 2",
                        "spurious_failover_expected": False, "cause": "path 1 cut"},
        "keep": ["sender"],
    },
    # The same conditions with messages sparser than the 200 ms SACK delay (150 and 250 ms):
    # there the delayed-SACK timer, not the next packet, sends the SACK of a lone packet. 8 s of
    # sending: a failover of 7 x an inflated RTO (~0.5 s) must fit after the cut at 2 s.
    "eklund-sparse": {
        "name": "eklund-sparse",
        "about": "the eklund campaign with messages every 150 and 250 ms (sparser than the "
                 "200 ms SACK delay), 8 s of sending",
        "args": {"sack_ms": [0, 40, 200], "rto_min_ms": 100, "pmr": 2, "delay_ms": 20,
                 "interval_ms": [150, 250], "fail_s": 2, "duration_s": 8},
        "env": {"VERBOSE": 0, "RTPRIO": 20},
        "repetitions": 3,
        "run_name": "{name}_sack{sack_ms}_iv{interval_ms}_r{rep}",
        "truth_extra": {"scenario": "Eklund campaign, sparse messages: primary path cut 2 s "
                                    "after the client starts, failover to path 2",
                        "spurious_failover_expected": False, "cause": "path 1 cut"},
        "keep": ["sender"],
    },
    # SCTP against TCP under random loss (the dissertation's table: throughput and latency at
    # 0, 0.1, 1, 3, 10 % loss with RTO.min 1 s): the SCTP association and a Linux TCP
    # connection side by side in one run (MODE=mixed), same messages, same wire, loss on both
    # paths and both directions, no path failure. RTO.min 1 s (RFC 9260 15) against 200 ms
    # (Linux TCP's own floor, TCP_RTO_MIN): a lost DATA chunk that fast retransmit cannot
    # repair (the last of a burst, or a lost retransmission) waits for the T3 timer, so the
    # floor sets the latency tail. Delayed SACK 40 ms (Linux TCP's delayed-ACK minimum).
    "sctp-vs-tcp-loss": {
        "name": "sctp-vs-tcp-loss",
        "about": "SCTP (usrsctp) beside Linux TCP in one run, random loss 0 / 0.1 / 1 / 3 / "
                 "10 % on both paths, RTO.min 1000 or 200 ms, RTT 40 ms, SACK delay 40 ms, "
                 "one 100-byte message every 10 ms for 10 s, no path failure",
        "args": {"sack_ms": 40, "rto_min_ms": [1000, 200], "pmr": 5, "delay_ms": 20,
                 "interval_ms": 10, "fail_s": -1, "duration_s": 10},
        "env": {"MODE": "mixed", "LOSS": [0, 0.1, 1, 3, 10], "VERBOSE": 0, "RTPRIO": 20},
        "repetitions": 1,
        "run_name": "{name}_rtomin{rto_min_ms}_loss{LOSS}_r{rep}",
        "truth_extra": {"scenario": "SCTP and TCP side by side under random loss on both "
                                    "paths, no path failure",
                        "spurious_failover_expected": None, "cause": "random loss"},
        "keep": ["sender"],
    },
    # Rüngeler: a sender whose RTO can fall below the peer's SACK delay times out, and with
    # Path.Max.Retrans 1 fails over, although nothing was lost; the I-bit (RFC 7053) asks the
    # receiver to SACK at once. Sparse messages (every 400 ms, sparser than either SACK delay,
    # so every SACK is delayed), RTT 10 ms, no path failure (the sample trace
    # spur_pmr1_rtomin30's conditions), RTO.min from 30 ms up to above the SACK delay.
    "spurious-timeouts": {
        "name": "spurious-timeouts",
        "about": "spurious timeouts and failovers against RTO.min 30 / 100 / 300 ms, peer SACK "
                 "delay 40 / 200 ms, with and without the I-bit; usrsctp, RTT 10 ms, PMR 1, "
                 "one message every 400 ms for 8 s, no path failure",
        "args": {"sack_ms": [40, 200], "rto_min_ms": [30, 100, 300], "pmr": 1, "delay_ms": 5,
                 "interval_ms": 400, "fail_s": -1, "duration_s": 8},
        "env": {"SACK_IMMEDIATE": [0, 1], "VERBOSE": 0, "RTPRIO": 20},
        "repetitions": 1,
        "run_name": "{name}_sack{sack_ms}_rtomin{rto_min_ms}_ibit{SACK_IMMEDIATE}_r{rep}",
        "truth_extra": {"scenario": "sparse messages, no path failure: any failover is "
                                    "spurious",
                        "spurious_failover_expected": None, "cause": "none (no failure)"},
        "keep": ["sender"],
    },
    # Pyarali (SCIOP / IIOP): what a link failure does to a stream of messages, SCTP beside
    # TCP in one run (MODE=mixed): path 1 cut 3 s after the start and back 5 s later; SCTP
    # fails over to path 2, TCP (path 1 only) stalls until the path is back. A message every
    # 20 ms for 12 s; RTO.min 1000 / 200 ms and Path.Max.Retrans 2 / 5 set how long SCTP waits.
    "link-failure": {
        "name": "link-failure",
        "about": "path 1 cut for 5 s, SCTP (usrsctp, fails over) beside Linux TCP (stalls) in "
                 "one run; RTO.min 1000 / 200 ms x PMR 2 / 5; RTT 40 ms, a message every 20 ms",
        "args": {"sack_ms": 40, "rto_min_ms": [1000, 200], "pmr": [2, 5], "delay_ms": 20,
                 "interval_ms": 20, "fail_s": 3, "duration_s": 12},
        "env": {"MODE": "mixed", "RECOVER_S": 8, "VERBOSE": 0, "RTPRIO": 20},
        "repetitions": 2,
        "run_name": "{name}_rtomin{rto_min_ms}_pmr{pmr}_r{rep}",
        "truth_extra": {"scenario": "path 1 cut 3 s after the client starts, back 5 s later; "
                                    "SCTP fails over, TCP stalls",
                        "spurious_failover_expected": False, "cause": "path 1 cut"},
        "keep": ["sender"],
    },
    # The http-transfer template (handshake, transfer times, head-of-line waits per number of
    # streams) on paced message transfers, not HTTP: the SCTP association sends message i on
    # stream i % STREAMS (lab-streams.patch), a Linux TCP connection beside it (one byte
    # stream) carries the same messages; 200-byte messages every 5 ms for 4 s, 0 or 2 % random
    # loss on both paths (the sample traces hol_s4_loss2 / hol_s1_loss2's conditions, one
    # message size: the lab's TCP client takes no size range). The streams patch applies on
    # top of the abort and stalls patches (as in generate.sh).
    "http-transfer": {
        "name": "http-transfer",
        "about": "message transfers over 1 / 4 / 16 SCTP streams beside one TCP connection, 0 or "
                 "2 % random loss; usrsctp, RTT 40 ms, SACK delay 40 ms, RTO.min 200 ms, "
                 "200-byte messages every 5 ms for 4 s",
        "args": {"sack_ms": 40, "rto_min_ms": 200, "pmr": 2, "delay_ms": 20,
                 "interval_ms": 5, "fail_s": -1, "duration_s": 4},
        "env": {"MODE": "mixed", "STREAMS": [1, 4, 16], "LOSS": [0, 2], "MSGLEN": 200,
                "VERBOSE": 0, "RTPRIO": 20},
        "repetitions": 2,
        "run_name": "{name}_s{STREAMS}_loss{LOSS}_r{rep}",
        "truth_extra": {"scenario": "ordered messages over STREAMS streams beside one TCP "
                                    "connection, random loss, no path failure",
                        "spurious_failover_expected": None, "cause": "random loss"},
        "keep": ["sender"],
        "patches": ["lab-abort.patch", "lab-stalls.patch", "lab-streams.patch"],
    },
}



def variant(base, **changes):
    """A campaign made from built-in campaign `base` with some keys replaced; `args`, `env` and
    `truth_extra` are merged key by key (a None value drops the base's key)."""
    spec = copy.deepcopy(CAMPAIGNS[base])
    for k, v in changes.items():
        if k in ("args", "env", "truth_extra"):
            spec[k].update(v)
            for kk in [kk for kk, vv in v.items() if vv is None]:
                del spec[k][kk]  # None: drop the base's key
        else:
            spec[k] = v
    return spec


# sctp-vs-tcp-loss with one message every 100 ms for 20 s: too sparse for fast retransmit to come
# soon (RFC 9260 7.2.4 needs three later SACKs reporting the gap, i.e. three more messages,
# 300 ms), so RTO.min decides which repairs first: at 200 ms the T3 timer, at 1 s fast
# retransmit (README there: what each did).
CAMPAIGNS["sctp-vs-tcp-loss-sparse"] = variant(
    "sctp-vs-tcp-loss",
    name="sctp-vs-tcp-loss-sparse",
    about="the sctp-vs-tcp-loss campaign with one message every 100 ms for 20 s",
    args={"interval_ms": 100, "duration_s": 20},
    repetitions=2,
    truth_extra={"scenario": "SCTP and TCP side by side under random loss on both paths, "
                             "sparse messages, no path failure"},
)

# The eklund campaign with the Linux kernel's SCTP (lab-linux: Linux 6.1 in User-mode Linux):
# the same grid, path, RTO settings (RTO.min 100, the kernel's RTO.initial 3000 and RTO.max
# 60000, as usrsctp's) and heartbeat interval (1 s). PF_ENABLE=0: the kernel's default
# potentially-failed state (pf_retrans 0) would move new data at the first T3 expiry; off, PMR 2
# decides, as in usrsctp. SACK delay 0 is SCTP_DELAYED_SACK sack_freq 1 on both sockets (the
# sysctl's minimum is 1 ms); 40 / 200 ms are net.sctp.sack_timeout with the kernel's sack_freq 2.
CAMPAIGNS["eklund-linux"] = variant(
    "eklund",
    name="eklund-linux",
    lab="linux",
    about="failover time against message interval per SACK delay (Eklund, Brunstrom, "
          "Grinnemo); Linux kernel SCTP (lab-linux, UML 6.1), RTT 40 ms, RTO.min 100 ms, PMR 2, "
          "PF off, heartbeat 1 s, primary cut at 2 s",
    env={"PF_ENABLE": 0, "HB_MS": 1000, "VERBOSE": None, "RTPRIO": None},
)


def fmt_value(v):
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v)


def load_campaign(arg):
    if arg in CAMPAIGNS:
        spec = copy.deepcopy(CAMPAIGNS[arg])
    elif os.path.isfile(arg):
        with open(arg) as f:
            spec = json.load(f)
    else:
        sys.exit("campaign.py: no campaign %r (built in: %s; or a JSON file)"
                 % (arg, ", ".join(sorted(CAMPAIGNS))))
    for k in ("name", "args"):
        if k not in spec:
            sys.exit("campaign.py: the campaign has no %r" % k)
    missing = [a for a in ARGS if a not in spec["args"]]
    unknown = [a for a in spec["args"] if a not in ARGS]
    if missing or unknown:
        sys.exit("campaign.py: args must be exactly %s (missing %s, unknown %s)"
                 % (", ".join(ARGS), missing, unknown))
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", spec["name"]):
        sys.exit("campaign.py: name %r: letters, digits, _ . - only" % spec["name"])
    spec.setdefault("lab", "usrsctp")
    if spec["lab"] not in LABS and os.path.isdir(spec["lab"]):
        # a campaign.json written before the Linux lab: "lab" was the lab's folder
        spec["lab_dir"] = spec["lab"]
        spec["lab"] = "linux" if os.path.isfile(os.path.join(spec["lab"], "lksctp-gen.sh")) \
            else "usrsctp"
    if spec["lab"] not in LABS:
        sys.exit("campaign.py: lab %r (only %s)" % (spec["lab"], ", ".join(sorted(LABS))))
    spec.setdefault("env", {})
    spec.setdefault("repetitions", 1)
    spec.setdefault("truth_extra", {})
    spec.setdefault("keep", ["sender"])
    spec.setdefault("patches", [])
    bad = [k for k in spec["keep"] if k not in ("sender", "receiver")]
    if bad:
        sys.exit("campaign.py: keep: %s (only sender, receiver)" % bad)
    return spec


def axes(spec):
    """The grid: [(kind, key, [values])], args in gen.sh order, then env keys sorted."""
    out = []
    for k in ARGS:
        v = spec["args"][k]
        out.append(("arg", k, v if isinstance(v, list) else [v]))
    for k in sorted(spec["env"]):
        v = spec["env"][k]
        out.append(("env", k, v if isinstance(v, list) else [v]))
    return out


def expand_runs(spec, reps):
    ax = axes(spec)
    template = spec.get("run_name")
    if not template:
        template = "{name}" + "".join(
            "_%s{%s}" % (LABELS.get(k, k.lower()), k) for _, k, vals in ax if len(vals) > 1
        ) + "_r{rep}"
    runs = []
    # repetitions outermost: a campaign cut short still has whole passes over the grid
    for rep in range(1, reps + 1):
        for combo in itertools.product(*[vals for _, _, vals in ax]):
            args, env = {}, {}
            for (kind, k, _), v in zip(ax, combo):
                (args if kind == "arg" else env)[k] = v
            if spec["lab"] == "usrsctp":
                env.setdefault("SEED", rep)
            fields = {"name": spec["name"], "rep": rep}
            fields.update({k: fmt_value(v) for k, v in args.items()})
            fields.update({k: fmt_value(v) for k, v in env.items()})
            name = template.format(**fields)
            runs.append({"run": name, "rep": rep, "args": args, "env": env})
    names = [r["run"] for r in runs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        sys.exit("campaign.py: run_name gives the same name to several runs: %s" % dup[:5])
    return runs


def kept_files(run, keep):
    files = {"sender": run + "_sender.pcap.gz"}
    if "receiver" in keep:
        files["receiver"] = run + "_receiver.pcap.gz"
    files["truth"] = run + "_truth.json"
    return files


def is_done(out, run, keep, campaign):
    """Both files exist and the truth is this campaign's run (not a run made by other means
    under the same name)."""
    files = kept_files(run, keep)
    if not all(os.path.isfile(os.path.join(out, f)) for f in files.values()):
        return False
    try:
        with open(os.path.join(out, files["truth"])) as f:
            truth = json.load(f)
    except ValueError:
        return False
    return truth.get("campaign") == campaign and truth.get("run") == run


def gzip_to(src, dst):
    part = dst + ".part"
    with open(src, "rb") as fi, open(part, "wb") as raw:
        # mtime 0 and no file name in the header: the same capture gives the same bytes
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as fo:
            shutil.copyfileobj(fi, fo)
    os.replace(part, dst)


def keep_run(spec, work, out, files, truth, made):
    """Keeps what a run made (both labs): the sender capture (and the receiver's when kept),
    gzip with mtime 0, and the truth with the list of what was kept and dropped, written last by
    rename (a run whose truth exists is done)."""
    sender, receiver, truth_path = made
    kept_src = {sender, truth_path} | ({receiver} if "receiver" in spec["keep"] else set())
    dropped = [x for x in sorted(os.listdir(work))
               if x != "gen.out" and os.path.join(work, x) not in kept_src]
    truth["files"] = {"kept": sorted(files.values()), "dropped_by_campaign_runner": dropped}
    gzip_to(sender, os.path.join(out, files["sender"]))
    if "receiver" in files:
        gzip_to(receiver, os.path.join(out, files["receiver"]))
    part = os.path.join(out, files["truth"] + ".part")
    with open(part, "w") as f:
        json.dump(truth, f, indent=1)
        f.write("\n")
    os.replace(part, os.path.join(out, files["truth"]))  # last: the run is done


def record_failure(out, run, why, output_tail):
    stamp = datetime.datetime.now().isoformat(timespec="seconds")
    with open(os.path.join(out, "failures.txt"), "a") as f:
        f.write("%s %s: %s\n" % (stamp, run, why))
        for line in output_tail:
            f.write("    | %s\n" % line)


def tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return [l.rstrip("\n") for l in f.readlines()[-n:]]
    except OSError:
        return []


def wait_for_free_namespaces(env):
    names = [str(env.get("NS_A", "sg_ha")), str(env.get("NS_B", "sg_hb"))]
    for i in range(120):
        have = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        present = [n for n in names if re.search(r"^%s\b" % re.escape(n), have, re.M)]
        if not present:
            return
        if i == 0:
            print("  namespace(s) %s exist: another lab run? waiting up to 2 min"
                  % ", ".join(present), flush=True)
        time.sleep(1)
    print("  namespace(s) still there after 2 min: taken as stale, gen.sh deletes them", flush=True)


class Lab:
    """A writable copy of the lab (gen.sh / lksctp-gen.sh builds its binaries into it) with the
    patches applied."""

    def __init__(self, src, patches, script="gen.sh"):
        if not os.path.isfile(os.path.join(src, script)):
            sys.exit("campaign.py: no %s in %s (--lab)" % (script, src))
        self.script = script
        self.tmp = tempfile.mkdtemp(prefix="sctp-campaign-")
        self.dir = os.path.join(self.tmp, "lab")
        shutil.copytree(src, self.dir)
        for root, dirs, files in os.walk(self.dir):
            for n in dirs + files:
                p = os.path.join(root, n)
                os.chmod(p, os.stat(p).st_mode | 0o200)
        for p in patches:
            pp = p if os.path.isabs(p) else os.path.join(SAMPLES, p)
            subprocess.run(["patch", "-s", "-p1", "-i", pp], cwd=self.dir, check=True)
        self.bin = os.path.join(self.tmp, "bin")
        self.runs = os.path.join(self.tmp, "runs")
        os.makedirs(self.runs)

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


CURRENT = {"proc": None, "env": {}}


def session_members(sid):
    """Processes of session sid (gen.sh runs in its own session; `timeout` gives the client its
    own process group, so a process-group kill would miss it)."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        fields = st[st.rindex(")") + 2:].split()
        if int(fields[3]) == sid:  # state ppid pgrp session
            pids.append(int(d))
    return pids


def signal_all(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def stop_current():
    """Stops the running gen.sh: TERM to it (its trap runs once its foreground child is gone),
    then to every other process of its session; gen.sh's EXIT trap kills what it started and
    deletes its namespaces. If it does not end in 20 s, KILL the session and delete them here."""
    p = CURRENT["proc"]
    if p is None or p.poll() is not None:
        return
    signal_all([p.pid], signal.SIGTERM)
    time.sleep(0.2)
    signal_all([x for x in session_members(p.pid) if x != p.pid], signal.SIGTERM)
    try:
        p.wait(timeout=20)
        return
    except subprocess.TimeoutExpired:
        pass
    signal_all(session_members(p.pid), signal.SIGKILL)
    p.wait()
    if CURRENT.get("lab") == "linux":
        # lksctp-gen.sh boots the guest with umid=lksctp$$ and removes its folder itself
        shutil.rmtree(os.path.expanduser("~/.uml/lksctp%d" % p.pid), ignore_errors=True)
        return
    env = CURRENT["env"]
    for ns in (env.get("NS_A", "sg_ha"), env.get("NS_B", "sg_hb")):
        subprocess.run(["ip", "netns", "del", str(ns)], capture_output=True)


def one_run(lab, spec, r, out):
    """Runs gen.sh once and keeps its files; returns (ok, message, tail of gen.sh's output for
    failures.txt, the stack's path-1 ADDR_UNREACHABLE after the cut in s or None)."""
    run, args, env = r["run"], r["args"], r["env"]
    for f in kept_files(run, spec["keep"]).values():  # leftovers of an interrupted run
        for x in (f, f + ".part"):
            if os.path.exists(os.path.join(out, x)):
                os.remove(os.path.join(out, x))
    work = os.path.join(lab.runs, run)
    os.makedirs(work, exist_ok=True)
    prefix = os.path.join(work, run)
    extra = dict(spec["truth_extra"])
    extra.update({"campaign": spec["name"], "run": run, "repetition": r["rep"]})
    e = dict(os.environ)
    e.update({k: fmt_value(v) for k, v in env.items()})
    e["LAB_BIN"] = lab.bin
    e["TRUTH_EXTRA"] = json.dumps(extra)
    cmd = ["./gen.sh"] + [fmt_value(args[k]) for k in ARGS] + [prefix]
    log = os.path.join(work, "gen.out")
    setup_s = float(env.get("SETUP_S", 3))
    timeout = setup_s + float(args["duration_s"]) + 180
    wait_for_free_namespaces(env)
    with open(log, "w") as lf:
        lf.write("$ %s %s\n" % (" ".join("%s=%s" % (k, fmt_value(v)) for k, v in env.items()),
                                " ".join(cmd)))
        lf.flush()
        p = subprocess.Popen(cmd, cwd=lab.dir, env=e, stdout=lf, stderr=subprocess.STDOUT,
                             start_new_session=True)
        CURRENT["proc"], CURRENT["env"] = p, env
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_current()
            rc = None
        CURRENT["proc"] = None
    try:
        if rc is None:
            return False, "timeout after %.0f s" % timeout, tail(log), None
        if rc != 0:
            return False, "gen.sh exit status %d" % rc, tail(log), None
        sender = prefix + "_sender.pcap"
        receiver = prefix + "_receiver.pcap"
        truth_path = prefix + "_truth.json"
        for f in [sender, truth_path] + ([receiver] if "receiver" in spec["keep"] else []):
            if not os.path.isfile(f) or os.path.getsize(f) == 0:
                return False, "no %s" % os.path.basename(f), tail(log), None
        try:
            with open(truth_path) as f:
                truth = json.load(f)
        except ValueError as err:
            return False, "truth is not JSON: %s" % err, tail(log), None
        if float(args["fail_s"]) >= 0 and not truth.get("fail_epoch_logged"):
            return False, "a cut was scheduled but the wire log has none", tail(log), None
        files = kept_files(run, spec["keep"])
        keep_run(spec, work, out, files, truth, (sender, receiver, truth_path))
        client = (truth.get("stack_log") or {}).get("sctp_client") or {}
        notes = []
        late = truth.get("client_start_late_s")
        if late is not None and late > 0.05:
            notes.append("client started %.3f s late" % late)
        if float(args["fail_s"]) >= 0 and client.get("path1_unreachable_after_fail_s") is None:
            notes.append("the stack never gave up path 1 (duration too short?)")
        if (truth.get("stack_log") or {}).get("spurious_failover_observed"):
            notes.append("spurious failover in the stack log")
        return True, "; ".join(notes), [], client.get("path1_unreachable_after_fail_s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def linux_checks(truth, args):
    """What the Linux lab's truth says about the run's timing (the machine is shared, UML's
    timers are the host's): client start and cut lateness, the host's load, when the kernel gave
    up path 1, and each T3 expiry of the failover against the previous one plus the path-1 RTO
    in force (`late_ms`: the RTO's jiffy rounding and timer-wheel slack, plus the wait for the
    next DATA on path 1, which restarts the timer after an expiry; up to one message interval;
    `timers_ok` when every one is within what those explain)."""
    client = (truth.get("stack_log") or {}).get("client") or {}
    c = {}
    sched = re.search(r"client_start_scheduled=([\d.]+)", truth.get("times") or "")
    if sched and client.get("client_start_epoch"):
        c["client_start_late_ms"] = round((client["client_start_epoch"] - float(sched.group(1)))
                                          * 1e3, 3)
    late = re.search(r"late_ms=([-\d.]+)", truth.get("cut_log") or "")
    if late:
        c["cut_late_ms"] = float(late.group(1))
    primary = (truth.get("topology") or {}).get("server", ["10.201.1.2"])[0]
    down = [e["rel_cut_s"] for e in client.get("events", [])
            if "addr=%s state=ADDR_UNREACHABLE" % primary in e["event"]
            and e["rel_cut_s"] is not None and e["rel_cut_s"] >= 0]
    c["path1_unreachable_after_cut_s"] = down[0] if down else None
    c["comm_up"] = any("state=COMM_UP" in e["event"] for e in client.get("events", []))
    c["sender_frames"] = (truth.get("measured_sender") or {}).get("frames")
    # The expiries of path 1's T3 timer after the cut, as the kernel's per-path poll (every
    # 2 ms) sees them: its RTO doubles (the snmp counter, polled less often, only counts them).
    path1 = [p for p in client.get("path_changes", []) if p["addr"] == primary]
    expiries = [p for prev, p in zip(path1, path1[1:])
                if p["rel_cut_s"] is not None and p["rel_cut_s"] >= 0
                and p["rto_ms"] > prev["rto_ms"]
                and (not down or p["rel_cut_s"] <= down[0] + 0.02)]
    t3 = [e for e in client.get("t3_expiries", [])
          if e["rel_cut_s"] is not None and 0 <= e["rel_cut_s"] <= (down[0] + 0.02 if down
                                                                   else float("inf"))]
    c["t3_expiries_after_cut"] = {"rto_doublings": len(expiries),
                                  "snmp_t3": sum(e["delta"] for e in t3)}
    chain = []
    for prev, e in zip(expiries, expiries[1:]):
        gap = (e["epoch"] - prev["epoch"]) * 1e3
        chain.append({"gap_ms": round(gap, 1), "rto_ms": prev["rto_ms"],
                      "late_ms": round(gap - prev["rto_ms"], 1)})
    c["t3_chain_after_cut"] = chain
    # Expected lateness: up to one message interval (the timer restarts with the next DATA on
    # path 1), the timer wheel's granularity (HZ 100: 1 jiffy below 64 jiffies, 8 jiffies =
    # 80 ms from 0.64 s on), 20 ms for jiffy rounding and the 2 ms polls; a poll that saw the
    # previous expiry late makes it look early, by up to 15 ms.
    c["timers_ok"] = all(
        -15 <= x["late_ms"] <= float(args["interval_ms"]) + (80 if x["rto_ms"] >= 640 else 10)
        + 20 for x in chain)
    return c


def one_run_linux(lab, spec, r, out):
    """Runs lksctp-gen.sh once and keeps its files; returns (ok, message, output tail,
    path-1 unreachable after the cut in s or None, retry: the association never came up)."""
    run, args, env = r["run"], r["args"], r["env"]
    for f in kept_files(run, spec["keep"]).values():  # leftovers of an interrupted run
        for x in (f, f + ".part"):
            if os.path.exists(os.path.join(out, x)):
                os.remove(os.path.join(out, x))
    work = os.path.join(lab.runs, run)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prefix = os.path.join(work, run)
    e = dict(os.environ)
    e.update({k: fmt_value(v) for k, v in env.items()})
    cmd = ["./" + lab.script] + [fmt_value(args[k]) for k in ARGS] + [prefix]
    log = os.path.join(work, "gen.out")
    timeout = float(args["duration_s"]) + 240  # the script's own UML timeout is +120
    load = os.getloadavg()
    with open(log, "w") as lf:
        lf.write("$ %s %s\n" % (" ".join("%s=%s" % (k, fmt_value(v)) for k, v in env.items()),
                                " ".join(cmd)))
        lf.flush()
        p = subprocess.Popen(cmd, cwd=lab.dir, env=e, stdout=lf, stderr=subprocess.STDOUT,
                             start_new_session=True)
        CURRENT["proc"], CURRENT["env"], CURRENT["lab"] = p, env, "linux"
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_current()
            rc = None
        CURRENT["proc"] = None
    try:
        if rc is None:
            return False, "timeout after %.0f s" % timeout, tail(log), None, False
        sender = prefix + "_sender.pcap"
        receiver = prefix + "_receiver.pcap"
        truth_path = prefix + "_truth.json"
        if rc != 0:
            # no client.log: the guest did not run the client (also the 2-frame failure's form)
            return False, "%s exit status %d" % (lab.script, rc), tail(log), None, True
        for f in [sender, truth_path] + ([receiver] if "receiver" in spec["keep"] else []):
            if not os.path.isfile(f) or os.path.getsize(f) == 0:
                return False, "no %s" % os.path.basename(f), tail(log), None, False
        try:
            with open(truth_path) as f:
                truth = json.load(f)
        except ValueError as err:
            return False, "truth is not JSON: %s" % err, tail(log), None, False
        checks = linux_checks(truth, args)
        checks["host_loadavg_at_start"] = [round(x, 2) for x in load]
        if not checks["comm_up"] or (checks["sender_frames"] or 0) <= 2:
            return False, "the association never came up (%s frames captured)" % \
                checks["sender_frames"], tail(log), None, True
        if float(args["fail_s"]) >= 0 and truth.get("fail_epoch") is None:
            return False, "a cut was scheduled but cut.log has none", tail(log), None, False
        files = kept_files(run, spec["keep"])
        truth.update(spec["truth_extra"])
        truth.update({"campaign": spec["name"], "run": run, "repetition": r["rep"]})
        if r.get("attempt", 1) > 1:
            checks["attempt"] = r["attempt"]
            checks["first_attempt_failed"] = r.get("first_failure")
        truth["campaign_checks"] = checks
        keep_run(spec, work, out, files, truth, (sender, receiver, truth_path))
        notes = []
        if abs(checks.get("client_start_late_ms", 0)) > 50:
            notes.append("client started %.0f ms late" % checks["client_start_late_ms"])
        if checks.get("cut_late_ms", 0) > 50:
            notes.append("cut %.0f ms late" % checks["cut_late_ms"])
        if float(args["fail_s"]) >= 0 and checks["path1_unreachable_after_cut_s"] is None:
            notes.append("the kernel never gave up path 1 (duration too short?)")
        notes.append("T3 after the cut: %s" % (
            ", ".join("%.0f+%.0f" % (x["rto_ms"], x["late_ms"])
                      for x in checks["t3_chain_after_cut"]) or "-"))
        if not checks["timers_ok"]:
            notes.append("TIMERS LATE")
        notes.append("load %.2f" % load[0])
        return True, "; ".join(notes), [], checks["path1_unreachable_after_cut_s"], False
    finally:
        shutil.rmtree(work, ignore_errors=True)


def on_term(*_):
    raise KeyboardInterrupt


def hms(s):
    s = int(round(s))
    return "%dm%02ds" % (s // 60, s % 60) if s >= 60 else "%ds" % s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("campaign", help="a built-in campaign (%s) or a JSON file"
                    % ", ".join(sorted(CAMPAIGNS)))
    ap.add_argument("--out", help="output folder (default sample-traces/studies/NAME)")
    ap.add_argument("--lab", default=os.environ.get("LAB"),
                    help="the lab folder (default ../shared/lab for the usrsctp lab, "
                         "../shared/lab-linux for the Linux one, or $LAB)")
    ap.add_argument("--only", help="only runs whose name matches this regular expression")
    ap.add_argument("--repetitions", type=int, help="override the campaign's repetitions")
    ap.add_argument("--dry-run", action="store_true", help="list the runs and whether they are done")
    a = ap.parse_args()

    spec = load_campaign(a.campaign)
    script, default_lab = LABS[spec["lab"]]
    a.lab = a.lab or spec.get("lab_dir") or default_lab
    reps = a.repetitions or int(spec["repetitions"])
    out = a.out or os.path.join(HERE, spec["name"])
    runs = expand_runs(spec, reps)
    if a.only:
        runs = [r for r in runs if re.search(a.only, r["run"])]
    todo = [r for r in runs if not is_done(out, r["run"], spec["keep"], spec["name"])]
    print("campaign %s: %d runs (%d repetitions), %d done, %d to make; output %s"
          % (spec["name"], len(runs), reps, len(runs) - len(todo), len(todo), out), flush=True)
    if a.dry_run:
        for r in runs:
            print("  %-5s %s  %s %s  %s" % (
                "todo" if r in todo else "done", r["run"], script,
                " ".join(fmt_value(r["args"][k]) for k in ARGS),
                " ".join("%s=%s" % (k, fmt_value(v)) for k, v in r["env"].items())))
        return 0
    if not todo:
        return 0
    if os.geteuid() != 0:
        sys.exit("campaign.py: the lab needs root (network namespaces)")

    lock = open(LOCK, "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.exit("campaign.py: another campaign holds %s (the lab's namespaces are shared)" % LOCK)

    os.makedirs(out, exist_ok=True)
    manifest = dict(spec, repetitions=reps, lab_dir=os.path.abspath(a.lab), script=script,
                    gen_sh_args=ARGS, runner="sample-traces/studies/campaign.py")
    mpath = os.path.join(out, "campaign.json")
    if os.path.isfile(mpath):
        with open(mpath) as f:
            try:
                old = json.load(f)
            except ValueError:
                old = None
        if old and {k: old.get(k) for k in ("args", "env", "truth_extra", "keep")} != \
                {k: manifest.get(k) for k in ("args", "env", "truth_extra", "keep")}:
            print("warning: %s differs from this campaign (runs already made keep their own "
                  "truth); rewriting it" % mpath, flush=True)
    with open(mpath, "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")

    lab = Lab(a.lab, spec["patches"], script)
    signal.signal(signal.SIGTERM, on_term)
    t_start = time.time()
    made = failed = 0
    try:
        for i, r in enumerate(todo, 1):
            t0 = time.time()
            print("[%d/%d] %s: %s %s %s" % (
                i, len(todo), r["run"], script, " ".join(fmt_value(r["args"][k]) for k in ARGS),
                " ".join("%s=%s" % (k, fmt_value(v)) for k, v in r["env"].items())), flush=True)
            if spec["lab"] == "linux":
                ok, msg, out_tail, failover, retry = one_run_linux(lab, spec, r, out)
                if not ok and retry:  # the lab's occasional 2-frame run: once more
                    print("    %s: retrying once" % msg, flush=True)
                    record_failure(out, r["run"], msg + " (retried)", out_tail)
                    r2 = dict(r, attempt=2, first_failure=msg)
                    ok, msg, out_tail, failover, _ = one_run_linux(lab, spec, r2, out)
            else:
                ok, msg, out_tail, failover = one_run(lab, spec, r, out)
            dt = time.time() - t0
            elapsed = time.time() - t_start
            eta = elapsed / i * (len(todo) - i)
            if ok:
                made += 1
                size = os.path.getsize(os.path.join(out, r["run"] + "_sender.pcap.gz"))
                print("    ok in %.1f s, sender %.0f KB gzipped, stack gave up path 1 %s%s "
                      "(elapsed %s, ETA %s)" % (
                          dt, size / 1024,
                          "%.3f s after the cut" % failover if failover is not None else "-",
                          "; " + msg if msg else "", hms(elapsed), hms(eta)), flush=True)
            else:
                failed += 1
                record_failure(out, r["run"], msg, out_tail)
                print("    FAILED in %.1f s: %s (failures.txt) (elapsed %s, ETA %s)"
                      % (dt, msg, hms(elapsed), hms(eta)), flush=True)
    except KeyboardInterrupt:
        stop_current()
        print("interrupted: the current run is dropped; rerun to resume", flush=True)
        return 130
    finally:
        lab.close()
    total = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    print("campaign %s: %d made, %d failed in %s; %s holds %.2f MB"
          % (spec["name"], made, failed, hms(time.time() - t_start), out, total / 1e6), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # e.g. --dry-run | head
        sys.stderr.close()
        sys.exit(1)
