#!/usr/bin/env python3
"""Builds the fuzz seed corpora (deterministic, Python 3 stdlib only) into fuzz/seeds/<target>/.

    python3 fuzz/seeds.py

Sources: every capture of sample-traces/, sample-traces/broken/ and sample-traces/tunnel/ (committed), cut to
the first 64 KiB of records so that inputs stay small and executions fast. Per target:
  reader       byte 0 = 0 (read as is) + the capture; byte 0 = 1, 2, 3 + the capture (compressed by
               the harness with gzip, zstd, LZ4)
  analyze      the capture as it is
  link_ip      the capture's frames in link_ip's record format (link selector, step, length)
  sctp_chunks  each distinct SCTP packet (IP and link headers stripped), after 2 bytes missing=0
Only what is generated here goes in: nothing downloaded, nothing committed.
"""

import glob
import gzip
import hashlib
import os
import struct
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "seeds")
LIMIT = 64 * 1024
# The selector index of each link type in fuzz_targets/link_ip.rs LINKTYPES.
SELECTOR = {1: 0, 101: 1, 113: 2, 276: 3, 0: 4, 108: 5, 12: 6, 14: 7, 228: 8, 229: 9, 239: 10,
            9: 12, 50: 13, 104: 14}


def save(target, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)


def classic_frames(raw):
    """(linktype, [frame bytes]) of a classic pcap, or None."""
    if len(raw) < 24:
        return None
    magic = raw[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        e = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        e = ">"
    else:
        return None
    linktype = struct.unpack(e + "I", raw[20:24])[0] & 0x03FFFFFF
    frames, pos = [], 24
    while pos + 16 <= len(raw):
        caplen = struct.unpack(e + "I", raw[pos + 8:pos + 12])[0]
        if caplen > 262144 or pos + 16 + caplen > len(raw):
            break
        frames.append(raw[pos + 16:pos + 16 + caplen])
        pos += 16 + caplen
    return linktype, frames, pos


def sctp_of(linktype, frame):
    """The SCTP packet in a frame (Ethernet, SLL, SLL2, raw IPv4/IPv6; SCTP or UDP 9899)."""
    off = {1: 14, 113: 16, 276: 20, 101: 0, 228: 0, 229: 0}.get(linktype)
    if off is None or len(frame) <= off:
        return None
    ip = frame[off:]
    if ip[0] >> 4 == 4:
        hl, proto = (ip[0] & 15) * 4, ip[9]
    elif ip[0] >> 4 == 6:
        hl, proto = 40, ip[6]
    else:
        return None
    payload = ip[hl:]
    if proto == 17 and len(payload) > 8:
        payload, proto = payload[8:], 132
    return payload if proto == 132 and len(payload) >= 12 else None


def main():
    files = sorted(glob.glob(os.path.join(ROOT, "sample-traces", "*.pcap*")))
    files += sorted(glob.glob(os.path.join(ROOT, "sample-traces", "broken", "*.pcap*")))
    # Tunnelled frames (VXLAN) for the tunnel decoder.
    files += sorted(glob.glob(os.path.join(ROOT, "sample-traces", "tunnel", "*.pcap*")))
    # Endace ERF (no magic: the reader tells it by its first records).
    files += sorted(glob.glob(os.path.join(ROOT, "sample-traces", "erf", "*.erf*")))
    seen_sctp = set()
    for path in files:
        raw = open(path, "rb").read()
        if raw[:2] == b"\x1f\x8b":
            try:
                raw = gzip.decompress(raw)
            except (OSError, EOFError, zlib.error):
                save("reader", b"\x00" + raw)
                save("analyze", raw)
                continue
        parsed = classic_frames(raw)
        cut = raw[:LIMIT]
        if parsed:
            # Cut on a record boundary under LIMIT.
            pos = 24
            linktype, frames, _ = parsed
            for fr in frames:
                if pos + 16 + len(fr) > LIMIT:
                    break
                pos += 16 + len(fr)
            cut = raw[:pos]
        save("reader", b"\x00" + cut)
        for mode in (b"\x01", b"\x02", b"\x03"):
            save("reader", mode + cut[:8192])
        save("analyze", cut)
        if not parsed:
            continue
        linktype, frames, _ = parsed
        sel = SELECTOR.get(linktype)
        if sel is not None:
            rec, n = b"", 0
            for fr in [f for f in frames if len(f) <= 65535][:200]:
                rec += struct.pack(">BBH", sel, 0, len(fr)) + fr
            save("link_ip", rec)
        for fr in frames:
            p = sctp_of(linktype, fr)
            if p is None:
                continue
            key = (p[12:13], len(p) // 64)  # one seed per first-chunk type and size class
            if key in seen_sctp:
                continue
            seen_sctp.add(key)
            save("sctp_chunks", b"\x00\x00" + p)
    for t in ("reader", "analyze", "link_ip", "sctp_chunks"):
        d = os.path.join(OUT, t)
        n = len(os.listdir(d))
        size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
        print(f"seeds {t}: {n} files, {size // 1024} KiB")


if __name__ == "__main__":
    main()
