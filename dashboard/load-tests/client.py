#!/usr/bin/env python3
"""HTTP client steps of dashboard/load-tests/run.sh (Python 3 stdlib only, loopback only).

    client.py make-captures DIR N SAMPLE      # N distinct captures (SAMPLE + one extra record)
    client.py make-big FILE MB SAMPLE         # a capture of about MB MiB (SAMPLE's records repeated)
    client.py uploads BASE DIR                # every capture of DIR uploaded at once (threads)
    client.py wait BASE ID... [--timeout S]   # until each is done (tables too) or failed; prints the statuses
    client.py progress BASE ID                # prints: status, tables status, progress phase
    client.py half-upload BASE                # sends half of a multipart body, then closes
    client.py traversal BASE DATADIR          # path traversal attempts: all 4xx, nothing outside
    client.py wrk-paths BASE OUT.lua          # a wrk script rotating over pages and API calls
    client.py upload-one BASE FILE            # one upload; prints HTTP status and JSON body
    client.py list BASE                       # prints the ids of the listed captures

Every check that fails prints `FAIL ...` and exits 1.
"""

import concurrent.futures
import http.client
import json
import os
import socket
import struct
import sys
import time
import urllib.parse


def fail(msg):
    print(f"FAIL {msg}", flush=True)
    sys.exit(1)


def conn(base):
    u = urllib.parse.urlsplit(base)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=120)


def request(base, method, path, body=None, headers=None):
    c = conn(base)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def multipart(name, content, boundary="loadtestboundary7"):
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    return head + content + tail, f"multipart/form-data; boundary={boundary}"


def upload_bytes(base, name, content):
    body, ctype = multipart(name, content)
    return request(base, "POST", "/api/captures", body, {"Content-Type": ctype})


def upload_raw(base, name, content):
    """An upload that may be answered before its body is sent (413, 507): the send is allowed to
    fail with a reset, then the response is read from the socket."""
    u = urllib.parse.urlsplit(base)
    body, ctype = multipart(name, content)
    s = socket.create_connection((u.hostname, u.port), timeout=120)
    try:
        s.sendall((f"POST /api/captures HTTP/1.1\r\nHost: {u.hostname}\r\n"
                   f"Content-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
                   "Connection: close\r\n\r\n").encode() + body)
    except (BrokenPipeError, ConnectionResetError):
        pass
    resp = b""
    try:
        while True:
            k = s.recv(65536)
            if not k:
                break
            resp += k
    except ConnectionResetError:
        pass
    s.close()
    head, _, rest = resp.partition(b"\r\n\r\n")
    if not head:
        fail("upload: no response")
    status = int(head.split()[1])
    if b"chunked" in head.lower():
        out, pos = b"", 0
        while True:
            line_end = rest.index(b"\r\n", pos)
            n = int(rest[pos:line_end], 16)
            if n == 0:
                break
            out += rest[line_end + 2:line_end + 2 + n]
            pos = line_end + 2 + n + 2
        rest = out
    return status, rest


def pcap_records(path):
    """(header, [(record header, data)]) of a little- or big-endian classic pcap."""
    raw = open(path, "rb").read()
    end = "<" if raw[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    recs, pos = [], 24
    while pos + 16 <= len(raw):
        caplen = struct.unpack(end + "I", raw[pos + 8:pos + 12])[0]
        recs.append((raw[pos:pos + 16], raw[pos + 16:pos + 16 + caplen]))
        pos += 16 + caplen
    return raw[:24], recs, end


def make_captures(out_dir, n, sample):
    os.makedirs(out_dir, exist_ok=True)
    head, recs, end = pcap_records(sample)
    body = b"".join(h + d for h, d in recs)
    last_h, last_d = recs[-1]
    for i in range(n):
        # One more copy of the last record, 1 + i ms later: distinct content, distinct id.
        sec, usec, cl, ol = struct.unpack(end + "IIII", last_h)
        usec += 1000 * (i + 1)
        extra = struct.pack(end + "IIII", sec + usec // 1_000_000, usec % 1_000_000, cl, ol)
        with open(os.path.join(out_dir, f"load_{i:02}.pcap"), "wb") as f:
            f.write(head + body + extra + last_d)


def make_big(path, mib, sample):
    head, recs, end = pcap_records(sample)
    first = struct.unpack(end + "II", recs[0][0][:8])
    last = struct.unpack(end + "II", recs[-1][0][:8])
    span_us = (last[0] - first[0]) * 1_000_000 + (last[1] - first[1]) + 1000
    with open(path, "wb") as f:
        f.write(head)
        size, k = 24, 0
        while size < mib << 20:
            for h, d in recs:
                sec, usec, cl, ol = struct.unpack(end + "IIII", h)
                t = sec * 1_000_000 + usec + k * span_us
                f.write(struct.pack(end + "IIII", t // 1_000_000, t % 1_000_000, cl, ol) + d)
                size += 16 + len(d)
            k += 1


def uploads(base, d):
    files = sorted(os.listdir(d))
    t0 = time.time()

    def one(name):
        st, body = upload_bytes(base, name, open(os.path.join(d, name), "rb").read())
        if not 200 <= st < 300:
            return name, st, body.decode(errors="replace")
        return name, st, json.loads(body)["captures"][0]["id"]

    with concurrent.futures.ThreadPoolExecutor(len(files)) as ex:
        res = list(ex.map(one, files))
    dt = time.time() - t0
    bad = [r for r in res if not 200 <= r[1] < 300]
    if bad:
        fail(f"uploads: {bad}")
    ids = [r[2] for r in res]
    if len(set(ids)) != len(files):
        fail(f"uploads: {len(set(ids))} distinct ids for {len(files)} files")
    print(f"uploads: {len(files)} concurrent uploads accepted in {dt:.2f} s", file=sys.stderr)
    print(" ".join(ids))


def wait(base, ids, timeout):
    t_end = time.time() + timeout
    status = {}
    for i in ids:
        while True:
            st, body = request(base, "GET", f"/api/captures/{i}")
            if st != 200:
                fail(f"wait: GET {i}: HTTP {st}")
            c = json.loads(body)
            s = c["status"]
            # "done" once the summary is published and the tables are written (or failed).
            tables = (c.get("tables") or {}).get("status", "ready")
            if s == "done" and tables == "pending":
                s = "tables pending"
            elif s == "done" and tables == "failed":
                s = "tables failed"
            if s in ("done", "failed", "tables failed") or time.time() > t_end:
                status[i] = s
                break
            time.sleep(0.2)
    print(json.dumps(status))


def progress(base, i):
    """The capture's status, tables status and progress phase, one line."""
    st, body = request(base, "GET", f"/api/captures/{i}?limit=0")
    if st != 200:
        fail(f"progress: GET {i}: HTTP {st}")
    c = json.loads(body)
    print(c["status"], (c.get("tables") or {}).get("status"), c["progress"]["phase"])


def half_upload(base):
    u = urllib.parse.urlsplit(base)
    content = os.urandom(512 * 1024)
    body, ctype = multipart("half.pcap", b"\xd4\xc3\xb2\xa1" + content)
    s = socket.create_connection((u.hostname, u.port))
    s.sendall((f"POST /api/captures HTTP/1.1\r\nHost: {u.hostname}\r\nContent-Type: {ctype}\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode())
    s.sendall(body[: len(body) // 2])
    time.sleep(0.5)  # the server is streaming the part to its temp file now
    s.close()  # killed half-way
    print(f"half-upload: sent {len(body) // 2} of {len(body)} bytes, then closed", file=sys.stderr)


def traversal(base, data_dir):
    outside = os.path.join(os.path.dirname(os.path.abspath(data_dir)), "evil-traversal.pcap")
    if os.path.exists(outside):
        os.remove(outside)
    probes = [
        "/captures/..%2F..%2F..%2Fetc%2Fpasswd",
        "/captures/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "/api/captures/..%2F..%2Fsamples.json",
        "/api/captures/%2E%2E",
        "/captures/" + "0" * 64 + "/tables/..%2F..%2F..%2Fmeta.json",
        "/captures/" + "0" * 64 + "/tables/%2e%2e%2fcapture",
        "/assets/..%2F..%2FCargo.toml",
        "/assets/%2e%2e%2f%2e%2e%2fsrc%2fmain.rs",
        "/../../etc/passwd",
        "/api/captures/../../etc/passwd",
    ]
    for p in probes:
        c = conn(base)
        c.putrequest("GET", p, skip_accept_encoding=True)  # sent as is, not normalised
        c.endheaders()
        r = c.getresponse()
        body = r.read()
        c.close()
        if not 400 <= r.status < 500:
            fail(f"traversal: GET {p} gave HTTP {r.status}")
        if b"root:" in body or b"[workspace]" in body:
            fail(f"traversal: GET {p} leaked a file")
    st, body = request(base, "DELETE", "/api/captures/..%2F..%2Fcaptures")
    if not 400 <= st < 500:
        fail(f"traversal: DELETE gave HTTP {st}")
    # An uploaded name is shown, never used as a path.
    sample = open(os.environ["TRAVERSAL_SAMPLE"], "rb").read()
    st, body = upload_bytes(base, "../../evil-traversal.pcap", sample)
    if not 200 <= st < 300:
        fail(f"traversal: upload with a ../ name gave HTTP {st}: {body[:200]!r}")
    got = json.loads(body)["captures"][0]
    if got["name"] != "evil-traversal.pcap":
        fail(f"traversal: stored name {got['name']!r}")
    if os.path.exists(outside):
        fail(f"traversal: {outside} was written")
    for root, _dirs, files in os.walk(data_dir):
        if "evil-traversal.pcap" in files:
            fail(f"traversal: the uploaded name became a path in {root}")
    print(f"traversal: {len(probes) + 1} probes all 4xx; a '../' upload name stayed a label",
          file=sys.stderr)
    print(got["id"])


def wrk_paths(base, out):
    st, body = request(base, "GET", "/api/captures")
    caps = [c for c in json.loads(body)["captures"] if c["status"] == "done"]
    if not caps:
        fail("wrk-paths: no analysed capture")
    paths = ["/", "/api/captures", "/upload"]
    for c in caps[:4]:
        i = c["id"]
        paths += [f"/captures/{i}", f"/api/captures/{i}", f"/captures/{i}/associations/0",
                  f"/api/captures/{i}/associations/0/charts/rtt?width=800",
                  f"/api/captures/{i}/associations/0/charts/tsn?width=800"]
    with open(out, "w") as f:
        f.write("-- generated by client.py wrk-paths: rotates over pages and API calls\n")
        f.write("paths = {" + ", ".join(json.dumps(p) for p in paths) + "}\n")
        f.write("i = 0\nrequest = function()\n  i = i % #paths + 1\n"
                "  return wrk.format(\"GET\", paths[i])\nend\n")
    print(len(paths))


def main():
    a = sys.argv[1:]
    if not a:
        fail(__doc__)
    cmd = a[0]
    if cmd == "make-captures":
        make_captures(a[1], int(a[2]), a[3])
    elif cmd == "make-big":
        make_big(a[1], int(a[2]), a[3])
    elif cmd == "uploads":
        uploads(a[1], a[2])
    elif cmd == "wait":
        timeout = 300.0
        if "--timeout" in a:
            k = a.index("--timeout")
            timeout = float(a[k + 1])
            a = a[:k] + a[k + 2:]
        wait(a[1], a[2:], timeout)
    elif cmd == "progress":
        progress(a[1], a[2])
    elif cmd == "half-upload":
        half_upload(a[1])
    elif cmd == "traversal":
        traversal(a[1], a[2])
    elif cmd == "wrk-paths":
        wrk_paths(a[1], a[2])
    elif cmd == "upload-one":
        st, body = upload_raw(a[1], os.path.basename(a[2]), open(a[2], "rb").read())
        print(st)
        print(body.decode(errors="replace"))
    elif cmd == "list":
        st, body = request(a[1], "GET", "/api/captures")
        if st != 200:
            fail(f"list: HTTP {st}")
        print(" ".join(c["id"] for c in json.loads(body)["captures"]))
    else:
        fail(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
