#!/usr/bin/env python3
"""hol_truth.py PREFIX - for generate.sh: head-of-line (HOL) blocking truth of a lab run whose
client sent ordered messages on STREAMS streams (sctpgen -N, lab-streams.patch), written into
PREFIX_truth.json as "hol".

Inputs (all from the same run; pcap and log timestamps share the host's realtime clock):
  PREFIX_server.log[.gz]  sctpgen -v RECV lines: seq, sent_us (the message's 16-byte header),
                          tsn, sid, ssn (struct sctp_rcvinfo) and rcv_epoch (the instant
                          usrsctp_recvv returned the message: delivery to the application)
  PREFIX_receiver.pcap    first arrival of every DATA chunk at the receiver (tshark)
  PREFIX_sender.pcap      every transmission of every DATA chunk at the sender (tshark)
  PREFIX_wire.log         optional: netwire's record of the frames it dropped (a cross-check of
                          lost_tsns only; the kept sample has no wire log)

Definitions (ordered messages; m on stream s):
  arrival(m)   first arrival at the receiver of its last-arriving fragment (here every message
               is one DATA chunk: the first arrival of its TSN). A message's fragments are the
               run of consecutive TSNs with its sid/ssn from its B to its E chunk.
  delivery(m)  the server log's rcv_epoch.
  L            median over all messages of delivery - arrival (the application's normal latency).
  HOL delay    delivery - arrival - L. m is HOL-blocked when HOL delay > tolerance (1 ms) AND an
               earlier message of the same stream (lower SSN) arrived after m did (the cause,
               checked from the arrivals, so a slow application read is not called HOL).
  single-stream counterfactual, from arrivals alone: single_delay(m) = (instant at which every
               TSN <= m's last TSN had arrived) - arrival(m); blocked when > 1 ms.
  delay_ms     max, p95, sum, mean over the blocked messages; p95 = nearest rank on the sorted
               blocked delays (the ceil(0.95 n)-th smallest).
  lost_tsns    TSNs whose first transmission never reached the receiver, from the two captures:
               sent at least twice by the sender and first seen at the receiver after the
               sender's second transmission of it (or never seen at the receiver). A first
               transmission that got through arrives one one-way delay (20 ms) after it was
               sent, before any retransmission, which needs a SACK or the T3 timer.

Times "_rel_receiver_capture_s" are relative to the first packet of PREFIX_receiver.pcap (the
zero of tshark's frame.time_relative). Exits 1 when the inputs disagree (a logged message
whose TSN the receiver never saw, sid/ssn mismatch between the log and the capture).
"""
import gzip
import json
import math
import os
import statistics
import subprocess
import sys

TOL_MS = 1.0
SERVER_PORT = 5001


def us(text):
    """'1796191010.576805000' -> integer microseconds (no float rounding)."""
    sec, _, frac = text.strip().partition(".")
    frac = (frac + "000000")[:6]
    return int(sec) * 1000000 + int(frac)


def tsn_key(base):
    """serial-number order of 32-bit TSNs around base (a TSN of this association)."""
    return lambda t: ((t - base + 2 ** 31) % 2 ** 32) - 2 ** 31


def data_chunks(pcap):
    """[(time_us, tsn, sid, ssn, b, e)] of every DATA chunk towards the server, in capture order."""
    cmd = ["tshark", "-r", pcap, "-o", "sctp.relative_tsns:FALSE", "-Y",
           "sctp.chunk_type == 0 && sctp.dstport == %d" % SERVER_PORT, "-T", "fields",
           "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=,",
           "-e", "frame.time_epoch", "-e", "sctp.data_tsn_raw", "-e", "sctp.data_sid",
           "-e", "sctp.data_ssn", "-e", "sctp.data_b_bit", "-e", "sctp.data_e_bit"]
    # tshark 4.0: with relative TSNs off, sctp.data_tsn is empty and sctp.data_tsn_raw has the TSN
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    res = []
    for ln in out.splitlines():
        c = ln.split("\t")
        t = us(c[0])
        cols = [x.split(",") for x in c[1:6]]
        for tsn, sid, ssn, b, e in zip(*cols):
            res.append((t, int(tsn), int(sid, 0), int(ssn), b in ("1", "True"), e in ("1", "True")))
    return res


def first_packet_us(pcap):
    out = subprocess.run(["tshark", "-r", pcap, "-c", "1", "-T", "fields", "-e", "frame.time_epoch"],
                         capture_output=True, text=True, check=True).stdout
    return us(out)


def server_log(prefix):
    for path, op in ((prefix + "_server.log", open), (prefix + "_server.log.gz", gzip.open)):
        if os.path.exists(path):
            with op(path, "rt") as f:
                lines = f.readlines()
            break
    else:
        sys.exit("hol_truth: no %s_server.log[.gz]" % prefix)
    msgs = []
    for ln in lines:
        p = ln.split()
        if len(p) < 2 or p[1] != "RECV":
            continue
        kv = dict(x.split("=", 1) for x in p[2:] if "=" in x)
        if "rcv_epoch" not in kv:
            sys.exit("hol_truth: RECV lines without rcv_epoch/sid/ssn (needs lab-streams.patch and VERBOSE=1)")
        msgs.append({"seq": int(kv["seq"]), "len": int(kv["len"]), "tsn": int(kv["tsn"]), "sid": int(kv["sid"]),
                     "ssn": int(kv["ssn"]), "flags": int(kv["flags"], 0), "sent": int(kv["sent_us"]),
                     "delivery": us(kv["rcv_epoch"])})
    return msgs


def wire_first_tx_drops(prefix, first_tx):
    """TSNs whose DATA netwire dropped (client -> server) within 2 ms of the sender's first
    transmission of that TSN; None without a wire log."""
    path = prefix + "_wire.log"
    if not os.path.exists(path):
        return None
    lost = set()
    for ln in open(path):
        p = ln.split()
        if len(p) < 2 or p[1] != "DROP" or "dir=a>b" not in p:
            continue
        t = us(p[0])
        for x in p:
            if x.startswith("DATA(tsn="):
                tsn = int(x[len("DATA(tsn="):].split(",")[0])
                if tsn in first_tx and abs(t - first_tx[tsn]) <= 2000:
                    lost.add(tsn)
    return lost


def stats(delays):
    if not delays:
        return {"max": 0.0, "p95": 0.0, "sum": 0.0, "mean": 0.0}
    d = sorted(delays)
    return {"max": round(d[-1], 3), "p95": round(d[math.ceil(0.95 * len(d)) - 1], 3),
            "sum": round(sum(d), 3), "mean": round(sum(d) / len(d), 3)}


def main():
    prefix = sys.argv[1]
    tpath = prefix + "_truth.json"
    truth = json.load(open(tpath))
    msgs = server_log(prefix)
    if not msgs:
        sys.exit("hol_truth: no RECV lines in the server log")
    rx = data_chunks(prefix + "_receiver.pcap")
    tx = data_chunks(prefix + "_sender.pcap")
    zero_r = first_packet_us(prefix + "_receiver.pcap")
    key = tsn_key(tx[0][1] if tx else rx[0][1])

    arr, chunk = {}, {}          # first arrival, (sid, ssn, b, e) of each TSN at the receiver
    rx_copies = {}
    for t, tsn, sid, ssn, b, e in rx:
        rx_copies[tsn] = rx_copies.get(tsn, 0) + 1
        if tsn not in arr or t < arr[tsn]:
            arr[tsn] = t
        chunk.setdefault(tsn, (sid, ssn, b, e))
    txs = {}
    for t, tsn, *_ in tx:
        txs.setdefault(tsn, []).append(t)
    for v in txs.values():
        v.sort()

    problems = []
    for m in msgs:
        tsn = m["tsn"]
        if tsn not in chunk:
            problems.append("seq %d: TSN %d never seen at the receiver" % (m["seq"], tsn))
            continue
        sid, ssn, b, e = chunk[tsn]
        if (sid, ssn) != (m["sid"], m["ssn"]):
            problems.append("seq %d: log sid/ssn %d/%d, capture %d/%d" % (m["seq"], m["sid"], m["ssn"], sid, ssn))
        frags = [tsn]
        t = tsn
        while not chunk[t][2] and (t - 1) % 2 ** 32 in chunk and chunk[(t - 1) % 2 ** 32][:2] == (sid, ssn):
            t = (t - 1) % 2 ** 32
            frags.insert(0, t)
        t = tsn
        while not chunk[t][3] and (t + 1) % 2 ** 32 in chunk and chunk[(t + 1) % 2 ** 32][:2] == (sid, ssn):
            t = (t + 1) % 2 ** 32
            frags.append(t)
        m["frags"] = frags
        m["last_tsn"] = max(frags, key=key)
        m["arrival"] = max(arr[f] for f in frags)
    if problems:
        for p in problems[:20]:
            print("hol_truth:", p, file=sys.stderr)
        sys.exit(1)

    # the application's normal latency
    L = statistics.median(m["delivery"] - m["arrival"] for m in msgs)

    # HOL blocking per stream, in SSN order (ssn unwrapped by message order: seq grows with ssn)
    streams = sorted({m["sid"] for m in msgs})
    by_stream = {s: sorted((m for m in msgs if m["sid"] == s), key=lambda m: m["seq"]) for s in streams}
    blocked, slow_read, resid = [], 0, []
    for s in streams:
        latest, latest_m = None, None     # the latest arrival among earlier messages of the stream
        for m in by_stream[s]:
            m["hol_ms"] = (m["delivery"] - m["arrival"] - L) / 1000.0
            cause = latest is not None and latest > m["arrival"]
            m["blocked"] = m["hol_ms"] > TOL_MS and cause
            if m["blocked"]:
                blocked.append(m)
                m["waited_for"] = latest_m
                # delivered when the blocking message arrived (+ L)?
                resid.append((m["delivery"] - (latest + L)) / 1000.0)
            elif m["hol_ms"] > TOL_MS:
                slow_read += 1
            if latest is None or m["arrival"] > latest:
                latest, latest_m = m["arrival"], m

    # single-stream counterfactual: every TSN up to m's last TSN
    all_tsns = sorted(set(arr) | set(txs), key=key)
    lo = key(all_tsns[0])
    cum, run, missing = {}, None, None
    for k in range(lo, key(all_tsns[-1]) + 1):
        t = (all_tsns[0] + (k - lo)) % 2 ** 32
        if t not in arr:
            missing = t if missing is None else missing
            run = None
        elif missing is None:
            run = arr[t] if run is None else max(run, arr[t])
        cum[t] = run if missing is None else None
    single = []
    for m in msgs:
        c = cum.get(m["last_tsn"])
        m["single_ms"] = None if c is None else (c - m["arrival"]) / 1000.0
        if m["single_ms"] is not None and m["single_ms"] > TOL_MS:
            single.append(m["single_ms"])

    # lost first transmissions and retransmissions, from the two captures
    first_tx = {t: v[0] for t, v in txs.items()}
    lost = []
    for t, v in txs.items():
        if len(v) >= 2 and (t not in arr or arr[t] > v[1]):
            lost.append(t)
        elif len(v) == 1 and t not in arr:
            lost.append(t)
    lost.sort(key=key)
    wire = wire_first_tx_drops(prefix, first_tx)
    retx = {t: len(v) - 1 for t, v in txs.items() if len(v) > 1}

    per_stream = []
    for s in streams:
        b = [m["hol_ms"] for m in by_stream[s] if m["blocked"]]
        per_stream.append({"stream": s, "messages": len(by_stream[s]), "blocked_messages": len(b),
                           "delay_ms": stats(b)})
    rel = lambda t: round((t - zero_r) / 1e6, 6)
    hol = {
        "definition": (
            "Ordered messages, message m on stream s. arrival(m) = first arrival at the receiver (receiver "
            "capture) of m's last-arriving fragment (every message here is one DATA chunk: the first arrival of "
            "its TSN); delivery(m) = rcv_epoch of m's RECV line in the server log (realtime at which "
            "usrsctp_recvv returned it); L = median over all messages of delivery - arrival (latency_ms). HOL "
            "delay(m) = delivery - arrival - L; m is HOL-blocked when its HOL delay > tolerance_ms AND an "
            "earlier message of the same stream (lower SSN) arrived after m did. delay_ms: max, p95, sum, mean of "
            "the HOL delays of the blocked messages; p95 = nearest rank on the sorted blocked delays (the "
            "ceil(0.95 n)-th smallest). Single-stream counterfactual from arrivals alone: single_delay(m) = "
            "(instant at which every TSN <= m's last TSN had arrived) - arrival(m), blocked when > tolerance_ms "
            "(no L subtracted). lost_tsns: TSNs whose first transmission never reached the receiver, from the "
            "two captures: sent at least twice at the sender and first seen at the receiver after the sender's "
            "second transmission of it, or never seen at the receiver."),
        "streams": len(streams) if truth.get("streams") is None else truth["streams"],
        "streams_used": streams,
        "messages": len(msgs),
        "latency_ms": round(L / 1000.0, 3),
        "blocked_messages": len(blocked),
        "delay_ms": stats([m["hol_ms"] for m in blocked]),
        "single_stream_blocked_messages": len(single),
        "single_stream_delay_ms": stats(single),
        "per_stream": per_stream,
        "lost_tsns": lost,
        "lost_tsns_count": len(lost),
        "tolerance_ms": TOL_MS,
        "blocked": [{"seq": m["seq"], "sid": m["sid"], "ssn": m["ssn"], "tsn": m["tsn"],
                     "arrival_rel_receiver_capture_s": rel(m["arrival"]),
                     "delivery_rel_receiver_capture_s": rel(m["delivery"]),
                     "delay_ms": round(m["hol_ms"], 3),
                     "waited_for_tsn": m["waited_for"]["last_tsn"], "waited_for_seq": m["waited_for"]["seq"]}
                    for m in sorted(blocked, key=lambda m: m["delivery"])],
        "checks": {
            "not_blocked_but_late_messages": slow_read,
            "not_blocked_but_late_note": "HOL delay > tolerance but no earlier message of the stream arrived "
                                         "later: a slow application read, not HOL",
            "blocked_release_residual_ms": {"min": round(min(resid), 3) if resid else None,
                                            "max": round(max(resid), 3) if resid else None},
            "blocked_release_note": "delivery of each blocked message - (arrival of the message it waited for "
                                    "+ L): ~0 when the stack delivers it as soon as the gap is filled",
            "data_transmissions_at_sender": sum(len(v) for v in txs.values()),
            "distinct_tsns": len(txs),
            "retransmitted_tsns": len(retx),
            "retransmissions": sum(retx.values()),
            "duplicate_arrivals_at_receiver": sum(n - 1 for n in rx_copies.values()),
            "wire_log_first_tx_drops": sorted(wire, key=key) if wire is not None else None,
            "wire_log_agrees": (sorted(wire, key=key) == lost) if wire is not None else None,
            "single_stream_unknown": sum(1 for m in msgs if m["single_ms"] is None),
        },
    }
    truth["hol"] = hol
    json.dump(truth, open(tpath, "w"), indent=2)
    print("hol_truth %s: %d messages on %d stream(s), %d HOL-blocked (max %.1f ms, p95 %.1f ms, sum %.1f ms); "
          "single-stream %d; %d lost first transmissions; L %.3f ms"
          % (os.path.basename(prefix), len(msgs), len(streams), len(blocked), hol["delay_ms"]["max"],
             hol["delay_ms"]["p95"], hol["delay_ms"]["sum"], len(single), len(lost), L / 1000.0))


if __name__ == "__main__":
    main()
