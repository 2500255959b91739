#!/usr/bin/env python3
"""Endace ERF captures of a real association, for the ERF reader (analyzer/src/capture/erf.rs).

fmt_sender.pcap (a usrsctp association on Ethernet) and links/fmt_sender_chdlc.pcap (the same on
Cisco HDLC) written as DAG cards write ERF records (Endace "ERF Types Reference Guide"): a
16-byte header (timestamp 32.32 fixed-point little-endian; type; flags with the varying-length
bit and the interface; record length, loss counter and wire length big-endian), extension
headers, the type's sub-header, the frame, padding to 8 bytes. Wireshark has no ERF writer for
these (editcap 4.0 refuses them), so this script writes them; tshark reads them back for
truth.json.

- fmt_sender_eth.erf: type 2 (Ethernet) with each frame's FCS, as DAG Ethernet cards capture
  it (wire length + 4); every fourth record carries a Host ID extension header; a padding
  record after the tenth; one record says the card lost 2 packets before it; a provenance
  metadata record (type 27) at the end.
- fmt_sender_ipv4.erf.gz: type 22 (IPv4, no link header), gzip-compressed (read as a stream).
- fmt_sender_pos.erf: type 1 (Packet over SONET, here Cisco HDLC framing).

Needs: python3, tshark, capinfos. Run from anywhere.
"""
import gzip
import json
import os
import struct
import subprocess
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
TRACES = os.path.dirname(HERE)

ETH, HDLC_POS, IPV4, META, PAD = 2, 1, 22, 27, 48
HOST_ID = 17


def read_pcap(path):
    """(ts_sec, ts_usec, bytes) of each record of a little-endian microsecond pcap."""
    data = open(path, 'rb').read()
    magic, = struct.unpack_from('<I', data, 0)
    assert magic == 0xA1B2C3D4, f"{path}: not a little-endian microsecond pcap"
    at, out = 24, []
    while at + 16 <= len(data):
        sec, usec, caplen, _ = struct.unpack_from('<IIII', data, at)
        out.append((sec, usec, data[at + 16:at + 16 + caplen]))
        at += 16 + caplen
    return out


def erf_ts(sec, usec):
    return (sec << 32) | ((usec * (1 << 32) + 500_000) // 1_000_000)


def record(ts, rtype, body, wlen, lctr=0, ext=(), iface=0):
    """One record: header, extension headers (8 bytes each, bit 7 of the first byte: another
    follows), then the body (sub-header and frame), padded to 8 bytes."""
    ext = list(ext)
    size = 16 + 8 * len(ext) + len(body)
    rlen = (size + 7) // 8 * 8
    head = struct.pack('<Q', ts) + bytes([rtype | (0x80 if ext else 0), 0x04 | iface])
    head += struct.pack('>HHH', rlen, lctr, wlen)
    exts = b''
    for i, e in enumerate(ext):
        more = 0x80 if i + 1 < len(ext) else 0
        exts += bytes([more | e[0]]) + e[1:]
    return (head + exts + body).ljust(rlen, b'\0')


def host_id_ext(host):
    # Host ID extension header: type 17, source ID 1, a 48-bit host ID.
    return bytes([HOST_ID, 1]) + host.to_bytes(6, 'big')


def eth_file(frames):
    out = b''
    for i, (sec, usec, f) in enumerate(frames):
        fcs = struct.pack('<I', zlib.crc32(f))
        ext = [host_id_ext(0x0000AB0000CD)] if i % 4 == 3 else []
        out += record(erf_ts(sec, usec), ETH, b'\0\0' + f + fcs, len(f) + 4,
                      lctr=2 if i == 20 else 0, ext=ext)
        if i == 9:
            out += record(0, PAD, b'\0' * 40, 0)
    sec, usec, _ = frames[-1]
    # A provenance record (section header 0xFF00, a comment tag), after the last frame.
    meta = struct.pack('>HHHH', 0xFF00, 4, 0, 16) + struct.pack('>HH', 1, 8) + b'ERF test'
    out += record(erf_ts(sec, usec + 1), META, meta, 0)
    return out


def ipv4_file(frames):
    out = b''
    for sec, usec, f in frames:
        assert f[12:14] == b'\x08\x00', "IPv4 over Ethernet expected"
        ip = f[14:]
        out += record(erf_ts(sec, usec), IPV4, ip, len(ip))
    return out


def pos_file(frames):
    out = b''
    for sec, usec, f in frames:
        out += record(erf_ts(sec, usec), HDLC_POS, f, len(f))
    return out


def tshark_row(path, name):
    frames = int(subprocess.run(['capinfos', '-c', '-M', path], capture_output=True, text=True,
                                check=True).stdout.split(':')[-1])
    run = lambda *a: subprocess.run(['tshark', '-r', path, *a], capture_output=True, text=True,
                                    check=True).stdout
    sctp = len(run('-Y', 'sctp', '-T', 'fields', '-e', 'frame.number').split())
    chunks = sum(len([c for c in line.split(',') if c])
                 for line in run('-T', 'fields', '-e', 'sctp.chunk_type').splitlines())
    return {"file": name, "frames": frames, "sctp_frames": sctp, "sctp_chunks": chunks}


def main():
    eth = read_pcap(os.path.join(TRACES, 'fmt_sender.pcap'))
    chdlc = read_pcap(os.path.join(TRACES, 'links', 'fmt_sender_chdlc.pcap'))
    files = {
        'fmt_sender_eth.erf': eth_file(eth),
        'fmt_sender_ipv4.erf.gz': gzip.compress(ipv4_file(eth), mtime=0),
        'fmt_sender_pos.erf': pos_file(chdlc),
    }
    rows = [tshark_row(os.path.join(TRACES, 'fmt_sender.pcap'), 'fmt_sender.pcap')]
    for name, data in files.items():
        path = os.path.join(HERE, name)
        with open(path, 'wb') as f:
            f.write(data)
        rows.append(tshark_row(path, name))
    # What the eth file's records tell beyond their frames.
    rows[1].update({"card_lost": 2, "metadata_records": 1, "pad_records": 1})
    with open(os.path.join(HERE, 'truth.json'), 'w') as f:
        f.write('[\n' + ',\n'.join('  ' + json.dumps(r) for r in rows) + '\n]\n')


if __name__ == '__main__':
    main()
