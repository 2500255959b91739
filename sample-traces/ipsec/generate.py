#!/usr/bin/env python3
"""fmt_sender.pcap's SCTP association carried through IPsec ESP (RFC 4303) tunnels, encrypted by
scapy's ESP implementation (AES-CBC + HMAC-SHA-256-128 with the keys below, one SA per direction,
as a security gateway pair would send it under NDS/IP, 3GPP TS 33.210), in two captures:
- esp_fmt.pcap: ESP directly over IP (protocol 50) between 192.0.2.1 and 192.0.2.2;
- esp_natt_fmt.pcap: the same in UDP port 4500 (NAT traversal, RFC 3948), with one IKE packet
  (non-ESP marker) and one NAT-keepalive (0xFF) in front, which are not ESP.
Each ESP packet keeps its source frame's time. truth.json: packets, SAs (SPIs) and first frame,
and the keys, with which tshark decrypts the ESP and finds the SCTP inside (see
analyzer/tests/ipsec.rs). Needs: python3 with scapy and cryptography (pip install scapy
cryptography).
"""
import hashlib
import json
import os

from scapy.all import IP, UDP, Ether, PcapReader, PcapWriter, raw
from scapy.layers.ipsec import ESP, SecurityAssociation

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "fmt_sender.pcap")
GW = ("192.0.2.1", "192.0.2.2")
ENC_KEY = bytes(range(1, 17))
AUTH_KEY = bytes(range(101, 133))
SPI = {0: 0x1000A001, 1: 0x2000B002}
MAC = ("02:00:00:00:00:01", "02:00:00:00:00:02")
ETHER = {0: Ether(src=MAC[0], dst=MAC[1]), 1: Ether(src=MAC[1], dst=MAC[0])}


def sas(natt):
    out = {}
    for d, (src, dst) in ((0, GW), (1, GW[::-1])):
        nat = {"nat_t_header": UDP(sport=4500, dport=4500)} if natt else {}
        out[d] = SecurityAssociation(
            ESP, spi=SPI[d], crypt_algo="AES-CBC", crypt_key=ENC_KEY,
            auth_algo="SHA2-256-128", auth_key=AUTH_KEY,
            tunnel_header=IP(src=src, dst=dst), **nat)
    return out


def write(name, natt):
    path = os.path.join(HERE, name)
    sa = sas(natt)
    first_inner = None
    w = PcapWriter(path, linktype=1, sync=True)
    n = 0
    extra = 0
    with PcapReader(SRC) as r:
        for i, pkt in enumerate(r):
            ip = pkt[IP]
            if first_inner is None:
                first_inner = ip.src
            d = 0 if ip.src == first_inner else 1
            if natt and i == 0:
                # IKE (non-ESP marker, RFC 3948 2.2) and a NAT-keepalive (2.3): not ESP.
                for payload in (b"\x00\x00\x00\x00" + bytes(28), b"\xff"):
                    f = ETHER[0] / IP(src=GW[0], dst=GW[1]) / UDP(sport=4500, dport=4500) / payload
                    f.time = pkt.time
                    w.write(f)
                    extra += 1
            # A fixed IV per frame: the same bytes every run.
            iv = hashlib.sha256(b"iv %d" % i).digest()[:16]
            enc = sa[d].encrypt(IP(raw(ip)), iv=iv)
            f = ETHER[d] / enc
            f.time = pkt.time
            w.write(f)
            n += 1
    w.close()
    return {"file": name, "esp_packets": n, "other_packets": extra,
            "security_associations": 2, "spis": [hex(SPI[0]), hex(SPI[1])],
            "first_esp_frame": 1 + extra, "nat_t": natt}


def main():
    truth = {
        "source": "fmt_sender.pcap",
        "encryption": "AES-CBC", "encryption_key": "0x" + ENC_KEY.hex(),
        "authentication": "HMAC-SHA-256-128", "authentication_key": "0x" + AUTH_KEY.hex(),
        "gateways": list(GW),
        "captures": [write("esp_fmt.pcap", False), write("esp_natt_fmt.pcap", True)],
    }
    with open(os.path.join(HERE, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
