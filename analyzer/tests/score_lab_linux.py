#!/usr/bin/env python3
"""Score the analyzer's SCTP inference on Linux kernel SCTP lab runs (../shared/lab-linux), the
Linux counterpart of ../shared/lab/score_lab.py.

Usage: score_lab_linux.py CLI LISTFILE
  CLI       path to the sctp-analyzer binary (reads `analyze --format json`, the JSON contract)
  LISTFILE  one run prefix per line, relative to the list file's folder
            (e.g. ../shared/captures/lab-linux/dev-list.txt)

The truth is what the kernel itself reported (PREFIX_truth.json, made by mktruth_lk.py): the
socket options in force (`stack_log.<side>.sockopt_assoc`), the sysctls, per-path RTO and state
polled every 2 ms (`path_changes`), T3-rtx and delayed-SACK expiries (/proc/net/sctp/snmp deltas),
PF / unreachable events, the cut instant and when the cut really took effect (`wire_check`).

Checks, for the DATA direction (client -> server; the server sends no DATA) of each run:
  failover event time     first non-spurious failover t_s = first NEW DATA on path 2 after the cut
                          (measured_sender) within 5 ms
  failover time           (null when the analyzer gives none: the trace cannot tell when the
                          outage began) failover_ms = that instant - the effective cut, within
                          max(message interval, 25 ms). Effective cut = the last frame path 1
                          delivered (wire_check, both directions, max, never before the logged
                          instant); when wire_check is past the recovery (failback runs) the last
                          path-1 frame received by either endpoint before the recovery is used.
  no false spurious       no failover flagged spurious on a real cut
  spurious flagged/cause  no cut but the kernel declared a path PF / unreachable: a spurious
                          failover is expected, cause sack_delay_exceeds_rto when the peer's SACK
                          delay exceeds the kernel RTO of the path when its first T3 started
  no spurious (control)   no cut and no PF / unreachable event
  timeouts                number of timeouts = the kernel's T3-rtx expiries (SctpT3RtxExpireds)
  observed RTO            each observed_rto_ms within [kernel RTO - 15 ms, kernel RTO + lateness],
                          kernel RTO = the path's spinfo_rto last polled at or before the timer
                          start (timeout t - observed RTO, + 10 ms for the poll lag: polled
                          every 2 ms, the guest logged the previous expiry's doubling up to 6 ms
                          after that expiry's retransmission was captured).
                          Lateness: the 6.1 timer wheel rounds an expiry up to its level's
                          granularity (kernel/time/timer.c calc_index: level 0 below 63 jiffies,
                          1 jiffy; level 1 below 504, 8 jiffies; level 2 below 4032, 64; then
                          512), so a timer fires up to one granule late, never early (README: 0.64-
                          5.11 s up to 80 ms late at HZ 100); + 5 ms for softirq and capture
                          latency.
  PMR                     path_max_retrans null or = the kernel's pathmaxrxt; and claimed
                          whenever PF is off and path 1 was cut
  RTO.min                 rto_min_ms null or within the observed-RTO window of the kernel's rto_min
  heartbeat interval      each client path's hb_interval_ms null or within 10% of the kernel's
                          hbinterval (RFC 9260 8.3)
  pf_retrans              null or = the kernel's pf_retrans when PF is on (no claim when PF is off)
  failover_policy         null or "pf" / "rfc" as pf_enable says, "rfc" when PF cannot be
                          reached (pathmaxrxt <= pf_retrans + 1: Linux marks a path PF only
                          while pf_retrans < its error count < pathmaxrxt)
  SACK delay              receiver capture's sack_delay_ms median within 10 ms of the server's
                          sackdelay where its delayed-SACK timer fired at least 3 times
  stack                   each endpoint's `stack` "linux" when the JSON has the field
A field the JSON does not have yet counts as null (said so), never as a crash.
Output: one line per check, `ok` / `FAIL` / `null`, with the figures; then the counts.
Exit status 0 when nothing FAILs.
"""
import json, os, struct, subprocess, sys

SLACK_MS = 5.0   # softirq + capture latency above the timer wheel's granule
LOW_MS = 15.0    # an observed RTO may read this much below the kernel's (jiffy edge, capture)
ABSENT = object()


def jiffy_lateness_ms(rto_ms, hz):
    j = 1000.0 / hz
    rj = round(rto_ms / j)
    gran = 1 if rj < 63 else 8 if rj < 504 else 64 if rj < 4032 else 512
    return gran * j + SLACK_MS


def run_cli(cli, pcap):
    r = subprocess.run([cli, "analyze", "--format", "json", pcap], capture_output=True, text=True, timeout=600)
    if r.returncode not in (0, 1) or "panicked" in r.stderr:
        raise RuntimeError(f"rc={r.returncode} {r.stderr[:200]}")
    return json.loads(r.stdout)["captures"][0]


def direction(cap, sender_addrs):
    for a in cap.get("associations", []):
        for d in a.get("directions", []):
            ep = a["endpoints"][d["sender"]]
            if set(ep.get("addresses", [])) & set(sender_addrs):
                return a, d
    return None, None


def field(obj, key):
    """obj[key], ABSENT when the JSON has no such field yet"""
    if not isinstance(obj, dict) or key not in obj:
        return ABSENT
    return obj[key]


def name_of(v):
    if isinstance(v, dict):
        for k in ("name", "stack", "value", "id"):
            if isinstance(v.get(k), str):
                return v[k]
        return None
    return v


def pcap_ipv4(path):
    """(epoch, ip src, ip dst) of each IPv4 frame of a classic pcap (Ethernet, SLL, SLL2 or raw)"""
    with open(path, "rb") as f:
        gh = f.read(24)
        magic = struct.unpack("<I", gh[:4])[0]
        e = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
        nano = magic in (0xA1B23C4D, 0x4D3CB2A1)
        lt = struct.unpack(e + "I", gh[20:24])[0]
        off = {1: 14, 113: 16, 276: 20, 101: 0, 228: 0}.get(lt, 14)
        while True:
            h = f.read(16)
            if len(h) < 16:
                return
            s, frac, incl, _ = struct.unpack(e + "IIII", h)
            d = f.read(incl)
            if lt == 1 and d[12:14] != b"\x08\x00":
                continue
            ip = d[off:]
            if len(ip) < 20 or ip[0] >> 4 != 4:
                continue
            yield s + frac / (1e9 if nano else 1e6), ".".join(map(str, ip[12:16])), ".".join(map(str, ip[16:20]))


def effective_cut(pre, truth):
    """seconds after the logged cut at which path 1 delivered its last frame (>= 0), and how known"""
    cut = truth["fail_epoch"]
    rec = truth.get("recover_epoch")
    lim = (rec - cut) if rec is not None else float("inf")
    wc = [v for v in (truth.get("wire_check") or {}).values() if v is not None]
    if wc and all(v < lim for v in wc):
        return max(0.0, max(wc)), "wire_check"
    # wire_check looks until the end of the run: past a recovery it sees the path working again
    topo = truth["topology"]
    c1, s1 = topo["client"][0], topo["server"][0]
    last = None
    for side, src, dst in (("sender", s1, c1), ("receiver", c1, s1)):
        p = f"{pre}_{side}.pcap"
        if not os.path.exists(p):
            continue
        for ts, a, b in pcap_ipv4(p):
            if a == src and b == dst and cut - 5 <= ts < cut + lim:
                last = ts if last is None else max(last, ts)
    if last is None:
        return 0.0, "logged instant"
    return max(0.0, last - cut), "last path-1 frame received before the recovery"


def kernel_rto_at(path_changes, addr, epoch):
    r = None
    for p in path_changes:
        if p["addr"] == addr and p["epoch"] <= epoch:
            r = p["rto_ms"]
    return r


def score_run(cli, pre, checks):
    name = os.path.basename(pre)
    truth = json.load(open(pre + "_truth.json"))
    add = lambda chk, status, detail: checks.append((name, chk, status, detail))
    client = truth["stack_log"]["client"]
    server = truth["stack_log"]["server"]
    copt = client.get("sockopt_assoc") or {}
    sopt = server.get("sockopt_assoc") or {}
    csys = truth.get("sysctl_client") or {}
    hz = (truth.get("kernel") or {}).get("CONFIG_HZ") or 100
    # PF is on when enabled and reachable: Linux marks a path potentially failed only while
    # pf_retrans < its error count < pathmaxrxt (sm_sideeffect.c sctp_do_8_2_transport_strike),
    # so with pathmaxrxt <= pf_retrans + 1 (e.g. PMR 1, pf_retrans 0) the RFC 9260 8.2 rule moves
    # the data.
    pf_on = int(csys.get("pf_enable", 1)) == 1 and (
        copt.get("pathmaxrxt") is None
        or int(csys.get("pf_retrans", 0)) + 1 < int(copt["pathmaxrxt"])
    )
    interval = (truth.get("configured") or {}).get("interval_ms") or 0
    try:
        snd = run_cli(cli, pre + "_sender.pcap")
        rcv = run_cli(cli, pre + "_receiver.pcap")
    except Exception as ex:  # noqa
        add("run", "FAIL", str(ex))
        return
    a, d = direction(snd, truth["topology"]["client"])
    if d is None:
        add("direction", "FAIL", "no DATA direction from the client")
        return
    cap0 = snd.get("start_epoch_s")
    fos = d.get("failovers") or []
    spur = [f for f in fos if f.get("spurious")]
    cut = truth.get("fail_epoch")
    ev = " ".join(e["event"] for e in client.get("events", []))
    path_declared = "ADDR_UNREACHABLE" in ev or "ADDR_POTENTIALLY_FAILED" in ev
    fo_new = ((truth.get("measured_sender") or {}).get("first_new_data_on_path2_after_cut") or {}).get("rel_cut_s")

    if cut is not None:
        if fo_new is not None:
            real = [f for f in fos if not f.get("spurious")]
            want_t = truth["fail_rel_sender_capture_s"] + fo_new
            eff, how = effective_cut(pre, truth)
            want_ms = (fo_new - eff) * 1000
            tol = max(interval, 25)
            if not real:
                add("failover event time", "FAIL", f"no failover (want {want_t:.4f}s); failovers={fos}")
                add("failover time", "FAIL", f"no failover (want {want_ms:.0f}±{tol:.0f} ms)")
            else:
                f = real[0]
                err = (f["t_s"] - want_t) * 1000
                add("failover event time", "ok" if abs(err) <= 5 else "FAIL",
                    f"got {f['t_s']:.4f}s want {want_t:.4f}s ({err:+.1f} ms, ±5)")
                fm = f.get("failover_ms")
                # null: the analyzer says the trace cannot tell when the outage began.
                ok = fm is not None and abs(fm - want_ms) <= tol
                add("failover time", "null" if fm is None else "ok" if ok else "FAIL",
                    f"got {fm} want {want_ms:.0f}±{tol:.0f} ms (cut took effect +{eff * 1000:.1f} ms: {how})")
        add("no false spurious", "FAIL" if spur else "ok", f"spurious={[(f['t_s'], f.get('cause')) for f in spur]}")
    else:
        if path_declared:
            first_t3 = (client.get("t3_expiries") or [{}])[0].get("epoch")
            prim = truth["topology"]["primary_path"].split("->")[-1].strip()
            krto = None
            if first_t3 is not None:
                # the RTO the first expired timer ran with: the last poll before its expiry doubled it
                before = [p for p in client["path_changes"] if p["addr"] == prim and p["epoch"] < first_t3 - 0.003]
                krto = before[-1]["rto_ms"] if before else None
            sackd = sopt.get("sackdelay")
            cause = "sack_delay_exceeds_rto" if (krto is not None and sackd is not None and sackd > krto) else None
            add("spurious flagged", "ok" if spur else "FAIL",
                f"kernel declared {prim} failed with no cut; failovers={[(f['t_s'], f.get('spurious'), f.get('cause')) for f in fos]}")
            if cause:
                got = spur[0].get("cause") if spur else None
                add("spurious cause", "ok" if got == cause else "FAIL",
                    f"got {got} want {cause} (peer SACK delay {sackd} ms > kernel RTO {krto} ms)")
        else:
            add("no spurious (control)", "FAIL" if spur else "ok", f"spurious={len(spur)}")

    # timeouts = the kernel's T3-rtx expiries
    k_t3 = sum(x["delta"] for x in client.get("t3_expiries", []))
    tos = d.get("timeouts") or []
    add("timeouts = kernel T3 expiries", "ok" if len(tos) == k_t3 else "FAIL", f"got {len(tos)} want {k_t3}")
    # each observed RTO against the kernel's RTO when the timer started
    k_exp = [x["epoch"] for x in client.get("t3_expiries", [])]
    for to in tos:
        obs = to.get("observed_rto_ms")
        label = f"observed RTO at {to['t_s']:.3f}s ({to.get('timer_start')}, backoff {to.get('backoff')})"
        if obs is None or cap0 is None:
            add(label, "null", "observed_rto_ms null")
            continue
        ep = cap0 + to["t_s"]
        krto = kernel_rto_at(client["path_changes"], to["path"], ep - obs / 1000 + 0.010)
        near = min(((x - ep) * 1000 for x in k_exp), key=abs, default=None)
        nears = f"nearest kernel T3 {near:+.0f} ms" if near is not None else "no kernel T3"
        if krto is None:
            add(label, "null", f"got {obs:.1f}, no kernel RTO for {to['path']} ({nears})")
            continue
        hi = jiffy_lateness_ms(krto, hz)
        ok = krto - LOW_MS <= obs <= krto + hi
        add(label, "ok" if ok else "FAIL", f"got {obs:.1f} want [{krto - LOW_MS:.0f}, {krto + hi:.0f}] (kernel RTO {krto}; {nears})")

    # Path.Max.Retrans, RTO.min, pf_retrans, failover_policy
    want_pmr = copt.get("pathmaxrxt")
    pmr = d.get("path_max_retrans")
    add("PMR (null = no claim)", "null" if pmr is None else ("ok" if pmr == want_pmr else "FAIL"), f"got {pmr} want {want_pmr}")
    if cut is not None and not pf_on:
        add("PMR claimed (PF off, path cut)", "ok" if pmr is not None else "FAIL", f"got {pmr} want {want_pmr}")
    want_min = copt.get("rto_min")
    rmin = d.get("rto_min_ms")
    if rmin is None:
        add("RTO.min (null = no claim)", "null", f"got null want {want_min}")
    else:
        hi = jiffy_lateness_ms(want_min, hz)
        ok = want_min - LOW_MS <= rmin <= want_min + hi
        add("RTO.min (null = no claim)", "ok" if ok else "FAIL", f"got {rmin} want {want_min} [{want_min - LOW_MS:.0f}, {want_min + hi:.0f}]")
    want_pfr = int(csys.get("pf_retrans", 0)) if pf_on else None
    pfr = field(d, "pf_retrans")
    if pfr is ABSENT:
        add("pf_retrans", "null", f"field not in the JSON yet (want {want_pfr})")
    elif pfr is None:
        add("pf_retrans", "null", f"got null want {want_pfr}")
    else:
        add("pf_retrans", "ok" if pfr == want_pfr else "FAIL", f"got {pfr} want {want_pfr}")
    want_pol = "pf" if pf_on else "rfc"
    pol = field(d, "failover_policy")
    if pol is ABSENT:
        add("failover_policy", "null", f"field not in the JSON yet (want {want_pol})")
    elif name_of(pol) is None:
        add("failover_policy", "null", f"got null want {want_pol}")
    else:
        add("failover_policy", "ok" if name_of(pol) == want_pol else "FAIL", f"got {name_of(pol)} want {want_pol}")

    # SACK delay of the receiver, where its delayed-SACK timer fired at least 3 times
    n_ds = sum(x["delta"] for x in server.get("delayed_sack_expiries", []))
    if n_ds >= 3:
        _, dr = direction(rcv, truth["topology"]["client"])
        sd = (dr or {}).get("sack_delay_ms") or {}
        med = sd.get("median")
        want = sopt.get("sackdelay")
        st = "ok" if med is not None and abs(med - want) <= 10 else "FAIL"
        add("receiver SACK delay", st, f"got {med} (n {sd.get('n')}) want {want}±10 (kernel delayed-SACK expiries {n_ds})")

    # heartbeat interval of the client's paths: null or within 10% of the kernel's hb_interval
    want_hb = copt.get("hbinterval") or csys.get("hb_interval")
    for cap, side in ((snd, "sender"), (rcv, "receiver")):
        aa, _ = direction(cap, truth["topology"]["client"])
        for p in (aa or {}).get("paths", []):
            got = p.get("hb_interval_ms")
            if p.get("src") not in truth["topology"]["client"] or got is None or not want_hb:
                continue
            ok = abs(got - want_hb) <= 0.1 * want_hb
            n = (p.get("hb_period_ms") or {}).get("n")
            add(f"heartbeat interval {p.get('dst')} ({side})", "ok" if ok else "FAIL",
                f"got {got:.0f} want {want_hb}±10% (periods n {n})")

    # endpoint stack
    for cap, side in ((snd, "sender"), (rcv, "receiver")):
        aa, _ = direction(cap, truth["topology"]["client"])
        for i, ep in enumerate((aa or {}).get("endpoints", [])):
            who = "client" if set(ep.get("addresses", [])) & set(truth["topology"]["client"]) else "server"
            st = field(ep, "stack")
            label = f"stack of the {who} ({side} capture)"
            if st is ABSENT:
                add(label, "null", "not reported (no `stack` field yet)")
            else:
                add(label, "ok" if name_of(st) == "linux" else "FAIL", f"got {name_of(st)} want linux")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    cli, listfile = sys.argv[1], sys.argv[2]
    base = os.path.dirname(listfile)
    checks = []
    for line in open(listfile):
        p = line.strip()
        if not p or p.startswith("#"):
            continue
        score_run(cli, os.path.join(base, p), checks)
    for run, chk, st, detail in checks:
        print(f"  {st:<4} {run} {chk}: {detail}"[:400])
    n = {s: sum(1 for c in checks if c[2] == s) for s in ("ok", "FAIL", "null")}
    print(f"Linux lab: {n['ok']} ok, {n['FAIL']} FAIL, {n['null']} null (no claim) of {len(checks)} checks")
    sys.exit(0 if checks and n["FAIL"] == 0 else 1)


if __name__ == "__main__":
    main()
