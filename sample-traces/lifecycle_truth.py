#!/usr/bin/env python3
"""lifecycle_truth.py PREFIX - for generate.sh: check with tshark how a lab run's association
ended and write what the captures show into PREFIX_truth.json ("end").

Only runs whose TRUTH_EXTRA set "end" are touched (others: no-op). "end.kind":
  abort      exactly one ABORT chunk in each capture, sent by the client (a sender address),
             T-bit clear, carrying error cause end.cause (12, User-Initiated Abort, RFC 9260
             3.3.10.12) whose reason text is end.reason. Adds the ABORT's frame number and time
             in each capture, its cause as tshark decodes it, the DATA still unacknowledged when it
             was sent (sender view) and the server's ASSOC_CHANGE event.
  restarted  exactly two INIT chunks in each capture, both from the client with the same ports
             and new initiate tags, and the server's log has ASSOC_CHANGE state=RESTART. Adds the
             frame numbers and times of the first and the restarting INIT (and its INIT-ACK /
             COOKIE-ECHO / COOKIE-ACK), the old and new verification tags, the client's crash
             instant, the ICMP protocol-unreachable frames in between and how the restarted
             association ended (SHUTDOWN...).
Frame numbers are tshark's (1-based); times "_rel_<side>_capture_s" are frame.time_relative
(zero = first packet of that capture), as in the rest of the truth file. Exits 1 if the
capture does not show what the run was meant to show.
"""
import json
import subprocess
import sys

FIELDS = ["frame.number", "frame.time_relative", "frame.time_epoch", "ip.src", "ip.dst", "ip.proto",
          "sctp.srcport", "sctp.dstport", "sctp.verification_tag", "sctp.chunk_type", "sctp.abort_t_bit",
          "sctp.cause_code", "sctp.cause_length", "sctp.cause_information", "sctp.init_initiate_tag",
          "sctp.initack_initiate_tag", "sctp.data_tsn_raw", "sctp.sack_cumulative_tsn_ack_raw"]


def frames(pcap):
    cmd = ["tshark", "-r", pcap, "-o", "sctp.relative_tsns:FALSE", "-T", "fields", "-E", "separator=\t",
           "-E", "occurrence=a", "-E", "aggregator=,"]
    for f in FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    res = []
    for ln in out.splitlines():
        c = ln.split("\t") + [""] * len(FIELDS)
        r = {k: c[i] for i, k in enumerate(FIELDS)}
        r["n"] = int(r["frame.number"])
        r["rel"] = round(float(r["frame.time_relative"]), 6)
        r["epoch"] = float(r["frame.time_epoch"])
        r["types"] = [int(x) for x in r["sctp.chunk_type"].split(",") if x]
        # ICMP quoting an SCTP packet: the outer addresses come first
        r["src"] = r["ip.src"].split(",")[0]
        r["dst"] = r["ip.dst"].split(",")[0]
        r["proto"] = r["ip.proto"].split(",")[0]
        res.append(r)
    return res


def ints(s):
    return [int(x, 0) for x in s.split(",") if x]


def tshark_cause_name(pcap, frame):
    """The cause code as tshark -V names it, e.g. 'User initiated ABORT (0x000c)'."""
    out = subprocess.run(["tshark", "-r", pcap, "-Y", "frame.number == %d" % frame, "-V"],
                         capture_output=True, text=True).stdout
    for ln in out.splitlines():
        if "Cause code:" in ln:
            return ln.split("Cause code:", 1)[1].strip()
    return None


def server_events(prefix, state):
    ev = []
    try:
        for ln in open(prefix + "_server.log"):
            p = ln.split()
            if len(p) > 3 and p[1] == "EVENT" and p[2] == "ASSOC_CHANGE" and p[3] == "state=" + state:
                ev.append((float(p[0]), " ".join(p[2:])))
    except OSError:
        pass
    return ev


def log_epoch(path, kind):
    try:
        for ln in open(path):
            p = ln.split()
            if len(p) > 1 and p[1] == kind:
                return float(p[0])
    except OSError:
        pass
    return None


def fail(msg):
    print("lifecycle_truth: " + msg, file=sys.stderr)
    sys.exit(1)


def abort_end(prefix, t, end, caps, first):
    snd = set(t["sender"]["addrs"])
    for side, fr in caps.items():
        ab = [r for r in fr if 6 in r["types"]]
        if len(ab) != 1:
            fail("%s: %d frames with an ABORT chunk, expected 1" % (side, len(ab)))
        a = ab[0]
        codes = ints(a["sctp.cause_code"])
        info = a["sctp.cause_information"].split(",")[0]
        reason = bytes.fromhex(info.replace(":", "")).decode("utf-8", "replace") if info else ""
        if a["src"] not in snd or codes[:1] != [end["cause"]] or reason != end["reason"]:
            fail("%s: ABORT frame %d from %s, causes %s, reason %r; expected from the client, cause %d, %r"
                 % (side, a["n"], a["src"], codes, reason, end["cause"], end["reason"]))
        if any(x in (7, 8, 14) for r in fr for x in r["types"]):
            fail("%s: SHUTDOWN chunks in an aborted run" % side)
        end["abort_frame_" + side] = a["n"]
        end["abort_rel_%s_capture_s" % side] = a["rel"]
        if side == "sender":
            end["abort_epoch_sender_capture"] = a["epoch"]
            end["abort_src"], end["abort_dst"] = a["src"], a["dst"]
            end["abort_ports"] = [int(a["sctp.srcport"]), int(a["sctp.dstport"])]
            end["abort_verification_tag"] = a["sctp.verification_tag"]
            end["abort_t_bit"] = a["sctp.abort_t_bit"] in ("1", "True")
            end["abort_cause_codes"] = codes
            end["abort_cause_length"] = ints(a["sctp.cause_length"])[0]
            end["abort_cause_tshark"] = tshark_cause_name(caps_files[side], a["n"])
            end["abort_reason_hex"] = info.replace(":", "")
            end["abort_reason_tshark_decoded"] = reason
            # DATA sent and not cumulatively acknowledged when the ABORT left (sender view)
            before = [r for r in fr if r["n"] < a["n"]]
            tsns = [x for r in before if r["src"] in snd for x in ints(r["sctp.data_tsn_raw"])]
            cums = [x for r in before if r["dst"] in snd for x in ints(r["sctp.sack_cumulative_tsn_ack_raw"])]
            cum = max(cums) if cums else None
            end["data_tsns_sent_before_abort"] = len(set(tsns))
            end["last_data_tsn_before_abort"] = max(tsns) if tsns else None
            end["cum_ack_before_abort"] = cum
            end["data_unacked_at_abort"] = sorted(x for x in set(tsns) if cum is None or x > cum)
            after = [r for r in fr if r["n"] > a["n"]]
            end["frames_after_abort_sender"] = [{"frame": r["n"], "rel_s": r["rel"], "src": r["src"],
                                                 "chunk_types": r["types"], "ip_proto": int(r["proto"] or 0)}
                                                for r in after]
    ab = log_epoch(prefix + "_client.log", "ABORT")
    end["client_log_abort_rel_sender_capture_s"] = round(ab - first, 6) if ab else None
    ev = server_events(prefix, "COMM_LOST")
    if not ev:
        fail("server log has no ASSOC_CHANGE COMM_LOST")
    end["server_event"] = ev[0][1]
    end["server_event_rel_sender_capture_s"] = round(ev[0][0] - first, 6)
    end["checked"] = ("tshark: one ABORT chunk in each capture, from the client, cause code and reason as "
                      "stated; no SHUTDOWN; the server's stack reports COMM_LOST with error = the cause code")


def restart_end(prefix, t, end, caps, first):
    snd = set(t["sender"]["addrs"])
    for side, fr in caps.items():
        inits = [r for r in fr if 1 in r["types"]]
        if len(inits) != 2:
            fail("%s: %d INIT chunks, expected 2" % (side, len(inits)))
        ports = {(r["sctp.srcport"], r["sctp.dstport"]) for r in inits}
        tags = [r["sctp.init_initiate_tag"] for r in inits]
        if len(ports) != 1 or any(r["src"] not in snd for r in inits) or tags[0] == tags[1]:
            fail("%s: INITs %s not from the client on the same ports with new tags" % (side, [r["n"] for r in inits]))
        i1, i2 = inits
        ends = [r["n"] for r in fr if i1["n"] < r["n"] < i2["n"] and any(x in (6, 7, 8, 14) for x in r["types"])]
        if ends:
            fail("%s: ABORT/SHUTDOWN chunks between the INITs (frames %s): not a restart" % (side, ends))
        end["first_init_frame_" + side] = i1["n"]
        end["restart_init_frame_" + side] = i2["n"]
        end["restart_init_rel_%s_capture_s" % side] = i2["rel"]

        def nxt(ty, after):
            return next((r for r in fr if r["n"] > after and ty in r["types"]), None)
        ia = nxt(2, i2["n"])
        ce = nxt(10, i2["n"])
        ca = nxt(11, i2["n"])
        end["restart_handshake_frames_" + side] = {"init": i2["n"], "init_ack": ia and ia["n"],
                                                   "cookie_echo": ce and ce["n"], "cookie_ack": ca and ca["n"]}
        if side == "sender":
            ia1 = nxt(2, i1["n"])
            end["restart_init_epoch_sender_capture"] = i2["epoch"]
            end["ports"] = [int(i2["sctp.srcport"]), int(i2["sctp.dstport"])]
            end["client_initiate_tags"] = [i1["sctp.init_initiate_tag"], i2["sctp.init_initiate_tag"]]
            end["server_initiate_tags"] = [ia1 and ia1["sctp.initack_initiate_tag"], ia and ia["sctp.initack_initiate_tag"]]
            data1 = [r for r in fr if r["n"] < i2["n"] and r["src"] in snd and r["sctp.data_tsn_raw"]]
            end["last_data_before_restart_frame_sender"] = data1[-1]["n"] if data1 else None
            icmp = [r for r in fr if i1["n"] < r["n"] < i2["n"] and r["proto"] == "1"]
            end["icmp_unreachable_frames_sender"] = [r["n"] for r in icmp]
            sd = [r for r in fr if r["n"] > i2["n"] and any(x in (7, 8, 14) for x in r["types"])]
            ab = [r for r in fr if 6 in r["types"]]
            end["then"] = {"kind": "shutdown" if sd and not ab else ("abort" if ab else "none"),
                           "frames_sender": [{"frame": r["n"], "rel_s": r["rel"], "chunk_types": r["types"]}
                                             for r in sd + ab]}
    crash = log_epoch(prefix + "_client.log", "CRASH")
    end["client_crash_rel_sender_capture_s"] = round(crash - first, 6) if crash else None
    ev = server_events(prefix, "RESTART")
    if not ev:
        fail("server log has no ASSOC_CHANGE state=RESTART")
    end["server_event"] = ev[0][1]
    end["server_event_rel_sender_capture_s"] = round(ev[0][0] - first, 6)
    end["checked"] = ("tshark: two INITs from the client on the same ports with new initiate tags, the second "
                      "while the server still had the first association (no SHUTDOWN/ABORT in between); the "
                      "server's stack reports ASSOC_CHANGE RESTART")


caps_files = {}


def main():
    prefix = sys.argv[1]
    tp = prefix + "_truth.json"
    try:
        t = json.load(open(tp))
    except OSError:
        return
    end = t.get("end")
    if not isinstance(end, dict):
        return
    for side in ("sender", "receiver"):
        caps_files[side] = "%s_%s.pcap" % (prefix, side)
    caps = {side: frames(f) for side, f in caps_files.items()}
    first = caps["sender"][0]["epoch"]
    if end.get("kind") == "abort":
        abort_end(prefix, t, end, caps, first)
    elif end.get("kind") == "restarted":
        restart_end(prefix, t, end, caps, first)
    else:
        fail("unknown end.kind %r" % end.get("kind"))
    end["frame_numbers"] = "tshark frame numbers (1-based); _rel_<side>_capture_s = frame.time_relative"
    json.dump(t, open(tp, "w"), indent=2)
    print("lifecycle_truth: %s %s" % (prefix, json.dumps({k: v for k, v in end.items()
                                                          if "frame" in k and not isinstance(v, (list, dict))})))


if __name__ == "__main__":
    main()
