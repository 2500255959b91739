#!/usr/bin/env python3
"""Writes the broken-input corpus of sample-traces/broken/ (deterministic, Python 3 stdlib only).

    python3 sample-traces/broken/generate.py            # the small files, next to this script
    python3 sample-traces/broken/generate.py --big DIR  # also the two large ones, into DIR

Each case is a capture that is broken (or hostile) in one way. EXPECTED.md, written by this
script, says what the analyzer must answer for each: the error (exit 1) or warning (exit 0) text,
and the peak-memory cap. analyzer/tests/broken_corpus.rs checks every row against the CLI; it
builds the two large cases (1,000,000 verification tags: 68 MB; 100,000 chunks in one packet)
itself, with the same layout as `--big`, so that they are not committed.
"""

import gzip
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# --- CRC32c (RFC 9260 6.8 / Appendix A: Castagnoli polynomial, reflected 0x82F63B78) ---
_TABLE = []
for _n in range(256):
    _c = _n
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


# --- builders ---
LINKTYPE_RAW = 101


def pcap_header(linktype=LINKTYPE_RAW, snaplen=65535):
    # draft-ietf-opsawg-pcap 4: magic, version 2.4, thiszone, sigfigs, snaplen, linktype.
    return struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, linktype)


def record(ts_us, data, caplen=None, origlen=None):
    # draft-ietf-opsawg-pcap 5: ts_sec, ts_usec, captured length, original length.
    caplen = len(data) if caplen is None else caplen
    origlen = len(data) if origlen is None else origlen
    return struct.pack("<IIII", ts_us // 1_000_000, ts_us % 1_000_000, caplen, origlen) + data


def ipv4(payload, proto=132, ihl=5, total=None, ident=0, more=False, frag_off=0,
         src=b"\x0a\x00\x00\x01", dst=b"\x0a\x00\x00\x02"):
    # RFC 791 3.1; total=0 is what TSO captures show (the analyzer then takes the captured length).
    total = 20 + len(payload) if total is None else total
    flags = (0x2000 if more else 0) | (frag_off // 8)
    return struct.pack(">BBHHHBBH4s4s", 0x40 | ihl, 0, total, ident, flags, 64, proto, 0,
                       src, dst) + payload


def sctp(vtag, chunks, sport=5000, dport=5001):
    # RFC 9260 3.1 common header; checksum over the packet with the field zeroed (6.8), stored
    # little-endian as CRC32c is transmitted (Appendix A).
    pkt = bytearray(struct.pack(">HHII", sport, dport, vtag, 0) + chunks)
    pkt[8:12] = struct.pack("<I", crc32c(bytes(pkt)))
    return bytes(pkt)


def data_chunk(tsn, payload=b"\x01\x02\x03\x04", flags=0x03):
    # RFC 9260 3.3.1: type 0, flags (B, E), length, TSN, stream id, SSN, PPID, user data.
    return struct.pack(">BBHIHHI", 0, flags, 16 + len(payload), tsn, 1, 0, 0) + payload


def sack_chunk(cum, gaps=(), dups=(), n_dups=None):
    # RFC 9260 3.3.4: cum TSN ack, a_rwnd, number of gap blocks, number of duplicate TSNs.
    n_dups = len(dups) if n_dups is None else n_dups
    body = struct.pack(">IIHH", cum, 65536, len(gaps), n_dups)
    body += b"".join(struct.pack(">HH", s, e) for s, e in gaps)
    body += b"".join(struct.pack(">I", d) for d in dups)
    return struct.pack(">BBH", 3, 0, 4 + len(body)) + body


def pcapng(blocks):
    return b"".join(blocks)


def block(btype, body, trailer_len=None):
    # pcapng 3.1: type, total length, body (padded to 32 bits), total length again.
    body = body + b"\x00" * (-len(body) % 4)
    n = 12 + len(body)
    return struct.pack("<II", btype, n) + body + struct.pack("<I", n if trailer_len is None
                                                             else trailer_len)


def shb():
    # pcapng 4.1: byte-order magic, version 1.0, section length -1 (unknown).
    return block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))


def idb(linktype=LINKTYPE_RAW, snaplen=0):
    # pcapng 4.2: link type, reserved, snaplen (0 = no limit).
    return block(0x00000001, struct.pack("<HHI", linktype, 0, snaplen))


def epb(ts_us, data, trailer_len=None):
    # pcapng 4.3: interface id, timestamp (high, low; default resolution us), lengths, data.
    body = struct.pack("<IIIII", 0, ts_us >> 32, ts_us & 0xFFFFFFFF, len(data), len(data)) + data
    return block(0x00000006, body, trailer_len)


T0 = 1_700_000_000_000_000  # a fixed capture start, in microseconds


def good_packets(n=2, vtag=0x1234):
    return b"".join(record(T0 + i * 1000, ipv4(sctp(vtag, data_chunk(100 + i)))) for i in range(n))


# --- the cases: (file, bytes, expected exit status, kind, expected text, RSS cap in MiB) ---
# `text` must appear in the CLI's JSON (`error` for kind "error", one of `warnings` for kind
# "warning"); kind "ok" expects no error, and the named counter check in broken_corpus.rs.
def cases():
    out = []

    def add(name, data, status, kind, text, cap=64, why=""):
        out.append((name, data, status, kind, text, cap, why))

    add("empty.pcap", b"", 1, "error", "empty file at offset 0: not a pcap or pcapng file",
        why="empty file")
    add("bad_magic.pcap", b"GIF89a this is not a capture at all....", 1, "error",
        "bad magic 0x47494638 at offset 0: not a pcap or pcapng file", why="bad magic")
    add("truncated_global_header.pcap", pcap_header()[:10], 1, "error",
        "truncated pcap file header at offset 0: 10 of 24 bytes",
        why="global header cut at 10 of 24 bytes")
    rec = record(T0 + 5000, ipv4(sctp(0x1234, data_chunk(102))))
    add("truncated_record_header.pcap", pcap_header() + good_packets() + rec[:9], 0, "warning",
        "truncated record at offset 160: 9 of 16 bytes present at the end of the file; kept 2 frames",
        why="third record header cut at 9 of 16 bytes")
    add("truncated_record_body.pcap", pcap_header() + good_packets() + rec[:30], 0, "warning",
        "truncated record at offset 160: 30 of 68 bytes present at the end of the file; kept 2 frames",
        why="third record cut at 30 of its 68 bytes")
    add("caplen_over_snaplen.pcap",
        pcap_header(snaplen=64) + good_packets(1)
        + record(T0 + 2000, ipv4(sctp(0x1234, data_chunk(101, b"\x00" * 64)))),
        0, "warning", "captured length 112 exceeds the file's snap length 64 (kept)",
        why="record of 112 bytes in a file whose snap length is 64")
    big = struct.pack("<IIII", T0 // 1_000_000, 0, 300_000, 300_000) + b"\x00" * 64
    add("caplen_over_256k.pcap", pcap_header() + good_packets() + big, 0, "warning",
        "bad record at offset 160: captured length 300000 exceeds 262144 bytes (corrupt record header); kept 2 frames",
        why="record header announcing 300 000 bytes (> 256 KiB)")
    good_epb = epb(T0, ipv4(sctp(0x1234, data_chunk(100))))
    add("pcapng_block_length_mismatch.pcapng",
        pcapng([shb(), idb(), good_epb, epb(T0 + 1000, ipv4(sctp(0x1234, data_chunk(101))),
                                            trailer_len=999)]),
        0, "warning",
        "bad block at offset 132: block length mismatch: block type 0x00000006 starts with length 84 but ends with 999; kept 1 frames",
        why="EPB whose trailing length (999) differs from its leading one (84)")
    add("unknown_linktype.pcap", pcap_header(linktype=147) + good_packets(), 0, "warning",
        "frame 1 (offset 24): link header at frame offset 0: unsupported link type 147", why="LINKTYPE_USER0 (147)")
    add("ipv4_ihl_below_20.pcap",
        pcap_header() + record(T0, ipv4(sctp(0x1234, data_chunk(100)), ihl=4)), 0, "warning",
        "frame 1 (offset 24): ipv4 header at frame offset 0: IHL 4 < 5", why="IPv4 IHL 4 (16-byte header, RFC 791 minimum is 5)")
    # One SCTP packet (DATA 100, 84 bytes of SCTP) in three fragments; the second overlaps the
    # first (RFC 791 3.2 offsets in 8-byte units: 0-31, 24-55 overlapping, 56-83).
    whole = sctp(0x1234, data_chunk(100, b"\xAA" * 56))
    frags = [(0, whole[0:32], True), (24, whole[24:56], True), (56, whole[56:], False)]
    add("ipv4_fragment_overlap.pcap",
        pcap_header() + b"".join(record(T0 + i * 100, ipv4(p, ident=7, more=m, frag_off=o))
                                 for i, (o, p, m) in enumerate(frags)),
        0, "warning", "1 IP fragments overlapped earlier ones (IPv4: first data kept; IPv6: datagram dropped, RFC 5722)",
        why="3 fragments, the second overlapping the first by 8 bytes")
    add("ipv4_fragment_never_completed.pcap",
        pcap_header() + record(T0, ipv4(whole[:32], ident=9, more=True))
        + record(T0 + 40_000_000, ipv4(sctp(0x1234, data_chunk(101)))),
        0, "warning", "1 fragmented IP datagrams never completed (1 timed out after 30 s, 0 evicted at the bound of 1024 pending, 0 pending at the end)",
        why="first fragment only, then 40 s of silence (reassembly timeout 30 s)")
    d = data_chunk(100)
    add("sctp_chunk_length_0.pcap",
        pcap_header() + record(T0, ipv4(sctp(0x1234, d + struct.pack(">BBH", 3, 0, 0)))),
        0, "warning", "frame 1 (offset 24): SCTP chunk at offset 32: chunk length 0 < 4", why="SACK header, length 0")
    add("sctp_chunk_length_2.pcap",
        pcap_header() + record(T0, ipv4(sctp(0x1234, d + struct.pack(">BBH", 3, 0, 2)))),
        0, "warning", "frame 1 (offset 24): SCTP chunk at offset 32: chunk length 2 < 4", why="SACK header, length 2")
    add("sctp_chunk_past_end.pcap",
        pcap_header() + record(T0, ipv4(sctp(0x1234, d[:3] + b"\xc8" + d[4:]))), 0, "warning",
        "frame 1 (offset 24): SCTP chunk at offset 12: chunk length 200 goes past the packet end (20 bytes left)",
        why="DATA chunk of 20 bytes whose length says 200")
    add("sack_gap_start_after_end.pcap",
        pcap_header() + good_packets(3)
        + record(T0 + 9000, ipv4(sctp(0x4321, sack_chunk(100, gaps=[(5, 2)]), 5001, 5000),
                                 src=b"\x0a\x00\x00\x02", dst=b"\x0a\x00\x00\x01")),
        0, "warning", "frame 4 (offset 228): SACK gap block start 5 > end 2 ignored",
        why="SACK whose gap block is 5..2 (RFC 9260 3.3.4: start <= end)")
    # A SACK announcing 65 535 duplicate TSNs: the chunk length (u16) can hold 16 379 at most;
    # the IPv4 total length is 0 (TSO capture) so that the packet may exceed 64 KiB.
    dups = list(range(1000, 1000 + 16379))
    add("sack_65535_dups.pcap",
        pcap_header(snaplen=262144) + good_packets(1)
        + record(T0 + 9000, ipv4(sctp(0x4321, sack_chunk(100, dups=dups, n_dups=65535),
                                      5001, 5000), total=0,
                                 src=b"\x0a\x00\x00\x02", dst=b"\x0a\x00\x00\x01")),
        0, "warning",
        "frame 2 (offset 92): SCTP chunk at offset 12: SACK chunk of 65532 bytes, needs at least 262156",
        why="SACK announcing 65 535 duplicate TSNs (16 379 present)")
    add("sack_16379_dups.pcap",
        pcap_header(snaplen=262144) + good_packets(1)
        + record(T0 + 9000, ipv4(sctp(0x4321, sack_chunk(100, dups=dups), 5001, 5000), total=0,
                                 src=b"\x0a\x00\x00\x02", dst=b"\x0a\x00\x00\x01")),
        0, "ok", "", why="SACK with 16 379 duplicate TSNs (the most a chunk can hold)")
    add("corrupt_gzip.pcap.gz", b"\x1f\x8b\x08\x00" + b"\x55" * 60, 1, "error",
        "corrupt gzip stream at decompressed offset 0 (before the first frame): corrupt deflate stream",
        why="gzip magic then garbage")
    whole_gz = gzip.compress(pcap_header() + good_packets(50), mtime=0)
    add("truncated_gzip.pcap.gz", whole_gz[:len(whole_gz) // 2], 0, "warning",
        "corrupt gzip stream at decompressed offset 1294: incomplete deflate stream; the record at offset 1248 is incomplete; kept 18 frames",
        why="gzip capture of 50 packets cut in half (the 18 frames before the cut are kept)")
    return out


# The large cases (built at test time by analyzer/tests/broken_corpus.rs; `--big` writes them).
BIG = [
    ("sctp_100k_chunks.pcapng", 0, "ok", "", 64,
     "100 000 DATA chunks (2 MB) in one packet (pcapng EPB, IPv4 total length 0)"),
    ("vtags_1m.pcap", 0, "warning",
     "association limit 20000 (open at once) reached at frame 20001: packets of further associations are not analysed", 352,
     "1 000 000 DATA packets, each with a distinct verification tag"),
]


def big_100k_chunks():
    chunks = b"".join(data_chunk(i) for i in range(100_000))
    return pcapng([shb(), idb(), epb(T0, ipv4(sctp(0x1234, chunks), total=0))])


def big_vtags(n=1_000_000):
    parts = [pcap_header()]
    for i in range(n):
        parts.append(record(T0 + i, ipv4(sctp(0x10000 + i, data_chunk(i)))))
    return b"".join(parts)


def write_expected(rows):
    lines = [
        "# Broken-input corpus: expected results",
        "",
        "Written by `generate.py` (do not edit); checked by `analyzer/tests/broken_corpus.rs`,",
        "which runs `sctp-analyzer analyze --format json` on each file and checks the exit",
        "status, the text (in `error` for errors, in one of `warnings` otherwise), that no panic",
        "happened, and the child's peak RSS (getrusage) against the cap. `big` rows are built",
        "at test time (`generate.py --big DIR` writes them too).",
        "",
        "| file | broken how | exit | kind | expected text | RSS cap MiB |",
        "|---|---|---|---|---|---|",
    ]
    for name, status, kind, text, cap, why in rows:
        lines.append(f"| `{name}` | {why} | {status} | {kind} | {text or '-'} | {cap} |")
    lines.append("")
    with open(os.path.join(HERE, "EXPECTED.md"), "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(HERE, "expected.tsv"), "w") as f:
        f.write("# file\texit\tkind\ttext\trss_cap_mib\n")
        for name, status, kind, text, cap, _ in rows:
            f.write(f"{name}\t{status}\t{kind}\t{text}\t{cap}\n")


def main():
    rows = []
    for name, data, status, kind, text, cap, why in cases():
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)
        rows.append((name, status, kind, text, cap, why))
    for name, status, kind, text, cap, why in BIG:
        rows.append((name + " (big)", status, kind, text, cap, why))
    write_expected(rows)
    if len(sys.argv) == 3 and sys.argv[1] == "--big":
        os.makedirs(sys.argv[2], exist_ok=True)
        for name, build in (("sctp_100k_chunks.pcapng", big_100k_chunks),
                            ("vtags_1m.pcap", big_vtags)):
            with open(os.path.join(sys.argv[2], name), "wb") as f:
                f.write(build())


if __name__ == "__main__":
    main()
