#!/usr/bin/env python3
"""`berth up` against clients that misbehave, over raw TLS sockets.

Usage: run_http_limits_e2e.py BERTH

Starts `berth up --no-scheduler` and checks: unauthenticated requests announcing 64 MiB bodies
are answered 401 at once and closed, and the server's memory does not grow by their bodies;
watches whose clients leave are released (the process's descriptors come back) with no change
to the watched resource; malformed requests get their status. Prints one line per check and
exits non-zero on failure.
"""
import base64
import json
import os
import socket
import ssl
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import Fail, Up, run_against_up, wait_for  # noqa: E402


class Conn:
    """Raw TLS connections to the server of a kubeconfig."""

    def __init__(self, up):
        cfg = json.load(open(up.kubeconfig))
        cluster = cfg["clusters"][0]["cluster"]
        self.token = cfg["users"][0]["user"]["token"]
        self.host, port = cluster["server"][len("https://"):].rsplit(":", 1)
        self.port = int(port)
        self.ctx = ssl.create_default_context()
        self.ctx.load_verify_locations(
            cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())

    def open(self):
        raw = socket.create_connection((self.host, self.port), timeout=10)
        return self.ctx.wrap_socket(raw, server_hostname=self.host)


def read_to_end(s):
    """What the server sends until it closes the connection (a reset counts as closing)."""
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except (ConnectionResetError, ssl.SSLError, BrokenPipeError):
        pass
    return out


def status_of(answer):
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0


def rss_kb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise Fail("no VmRSS for %d" % pid)


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def check_unauthenticated_body_not_read(up):
    conn = Conn(up)
    before = rss_kb(up.proc.pid)
    results = []

    def client():
        s = conn.open()
        s.sendall(b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (64 << 20))
        # Keep sending the body until the server closes: it must answer without reading it.
        chunk = b"a" * 65536
        sent = 0
        try:
            while sent < (64 << 20):
                s.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, socket.timeout, OSError):
            pass
        results.append((sent, read_to_end(s)))
        s.close()

    threads = [threading.Thread(target=client) for _ in range(8)]
    t = time.time()
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    took = time.time() - t
    grown = (rss_kb(up.proc.pid) - before) // 1024
    print("  8 unauthenticated 64 MiB uploads: %.1fs, RSS %+d MiB, sent %s KiB each"
          % (took, grown, [r[0] >> 10 for r in results]))
    if len(results) != 8:
        raise Fail("clients did not finish")
    if any(sent >= (64 << 20) for sent, _ in results):
        raise Fail("the server read a whole unauthenticated body")
    if grown > 32:
        raise Fail("the server grew by %d MiB" % grown)
    # Without a body under way, the 401 is there to read.
    s = conn.open()
    s.sendall(b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
              b"Content-Length: %d\r\n\r\n" % (50 << 20))
    answer = read_to_end(s)
    if status_of(answer) != 401:
        raise Fail("expected 401, got %r" % answer[:200])


def check_gone_watchers_released(up):
    conn = Conn(up)
    up.kubectl(["create", "configmap", "quiet"])
    pid = up.proc.pid
    base = fd_count(pid)
    n = 100
    socks = []
    for _ in range(n):
        s = conn.open()
        s.sendall(("GET /api/v1/namespaces/default/configmaps?watch=1&fieldSelector="
                   "metadata.name%%3Dquiet HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n"
                   % conn.token).encode())
        socks.append(s)
    for s in socks:
        if status_of(s.recv(4096)) != 200:
            raise Fail("a watch was not answered 200")
    opened = fd_count(pid)
    # A few descriptors come and go on their own (kubectl's connection closing, the database).
    if opened < base + n - 3:
        raise Fail("expected %d more descriptors, %d -> %d" % (n, base, opened))
    for s in socks:
        s.close()
    wait_for("the watches' descriptors to be released",
             lambda: fd_count(pid) <= base + 2, timeout=20, interval=0.1)
    print("  descriptors: %d, %d with %d watches, %d after they left"
          % (base, opened, n, fd_count(pid)))
    up.kubectl(["delete", "configmap", "quiet"])


def check_malformed_requests(up):
    conn = Conn(up)
    auth = b"Authorization: Bearer " + conn.token.encode() + b"\r\n"
    cases = [
        (b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n" + auth +
         b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400),
        (b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n" + auth +
         b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        (b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n" + auth +
         b"Transfer-Encoding: chunked\r\n\r\nxyz\r\n", 400),
        (b"GET /api/v1/pods?" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x\r\n" + auth + b"\r\n", 414),
        (b"GET /api/v1/pods HTTP/1.1\r\nHost: x\r\n" + auth + b"X-Big: " + b"a" * 40000 +
         b"\r\n\r\n", 431),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 200),
    ]
    for request, want in cases:
        s = conn.open()
        s.sendall(request)
        answer = read_to_end(s) if want != 200 else s.recv(4096)
        s.close()
        if status_of(answer) != want:
            raise Fail("%r...: expected %d, got %r" % (request[:60], want, answer[:120]))


CHECKS = [check_unauthenticated_body_not_read, check_gone_watchers_released,
          check_malformed_requests]


def main():
    run_against_up(CHECKS, "berth-http-limits-e2e-", demo_nodes=0, extra=["--no-scheduler"])


if __name__ == "__main__":
    main()
