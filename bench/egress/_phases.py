"""Where the egress guard's time goes, one connection at a time: a plain SOCKS5 client on
loopback talks to the bench's own guard process (the one its Chromium is behind) and, for the
baseline, straight to the bench's server; the steps interleaved, medians. Name resolution is
timed in this process on a hosts-file name (no DNS is reachable here)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import socket
import ssl
import statistics
import struct
import time
from dataclasses import dataclass, field

from browser_core.safety import EgressGuard

STALL_MS = 30.0  # a keep-alive response this much slower than the direct median is a stall


@dataclass
class Phases:
    """Milliseconds per step, one list per step name."""

    ms: dict[str, list[float]] = field(default_factory=dict)

    def add(self, name: str, seconds: float) -> None:
        self.ms.setdefault(name, []).append(seconds * 1000)

    def median(self, name: str) -> float:
        return statistics.median(self.ms[name]) if self.ms.get(name) else float("nan")


def _tls() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the bench server's throw-away certificate
    return context


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("closed during the SOCKS handshake")
        data += chunk
    return data


def socks_open(guard_port: int, host: str, port: int, phases: Phases) -> tuple[socket.socket, int]:
    """Connect through the guard the way Chrome does; returns the socket and the reply code."""
    started = time.perf_counter()
    sock = socket.create_connection(("127.0.0.1", guard_port), timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as Chrome's sockets
    sock.sendall(b"\x05\x01\x00")
    _recv_exact(sock, 2)
    greeted = time.perf_counter()
    name = host.encode()
    sock.sendall(bytes([5, 1, 0, 3, len(name)]) + name + struct.pack("!H", port))
    reply = _recv_exact(sock, 10)[1]
    done = time.perf_counter()
    phases.add("accept + greeting", greeted - started)
    phases.add("CONNECT " + ("refused" if reply else "granted"), done - greeted)
    return sock, reply


def _get(tls: ssl.SSLSocket, path: str) -> None:
    tls.sendall(f"GET {path} HTTP/1.1\r\nHost: www.google.com\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        data += tls.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        chunk = tls.recv(262144)
        if not chunk:
            raise ConnectionError("closed mid-response")
        body += chunk


def _exchange(sock: socket.socket, paths: dict[str, str], phases: Phases, via: str) -> None:
    started = time.perf_counter()
    tls = _tls().wrap_socket(sock, server_hostname="www.google.com")
    phases.add(f"TLS handshake {via}", time.perf_counter() - started)
    try:
        for name, path in paths.items():
            for turn in ("new connection", "keep-alive"):
                started = time.perf_counter()
                _get(tls, path)
                phases.add(f"{name} {turn} {via}", time.perf_counter() - started)
    finally:
        with contextlib.suppress(OSError):
            tls.close()


def _one_round(guard_port: int, server_port: int, paths: dict[str, str], phases: Phases) -> None:
    for via in ("direct", "guarded"):
        if via == "direct":
            started = time.perf_counter()
            sock = socket.create_connection(("127.0.0.1", server_port), timeout=10)
            phases.add("TCP connect direct", time.perf_counter() - started)
        else:
            sock, _ = socks_open(guard_port, "www.google.com", 443, phases)
        _exchange(sock, paths, phases, via)
    refused, _ = socks_open(guard_port, "unmapped.example", 443, phases)
    refused.close()


def socket_phases(
    guard_port: int, server_port: int, paths: dict[str, str], rounds: int
) -> list[str]:
    """Lines for the report: each step's median, guarded beside direct where both exist."""
    phases = Phases()
    for _ in range(rounds):
        _one_round(guard_port, server_port, paths, phases)
    m = phases.median
    lines = [
        f"  SOCKS: accept + greeting {m('accept + greeting'):.2f} ms, CONNECT granted (mapped "
        f"name, guard's connect included) {m('CONNECT granted'):.2f} ms, refused "
        f"{m('CONNECT refused'):.2f} ms; a direct TCP connect {m('TCP connect direct'):.2f} ms",
        f"  TLS handshake through the guard {m('TLS handshake guarded'):.2f} ms, "
        f"direct {m('TLS handshake direct'):.2f} ms",
    ]
    for name in paths:
        for turn in ("new connection", "keep-alive"):
            guarded = phases.ms[f"{name} {turn} guarded"]
            direct = m(f"{name} {turn} direct")
            stalls = sum(1 for ms in guarded if ms > direct + STALL_MS)
            lines.append(
                f"  relay {name:<5} response, {turn:<14}: guarded {statistics.median(guarded):6.2f}"
                f" ms, direct {direct:6.2f} ms; stalls > {STALL_MS:.0f} ms: {stalls}/{len(guarded)}"
            )
    return lines


async def _resolution_ms(guard: EgressGuard, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        await guard.decide("localhost", 443)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def resolution_phases(repeat: int = 30) -> list[str]:
    """A guard's decision for a hosts-file name: a getaddrinfo thread hop every time, or the
    name cache's answer (re-checked on every use)."""
    open_name = ("localhost:443",)  # loopback is refused otherwise; the lookup is the same
    uncached = EgressGuard(allow_hosts=open_name, name_ttl_s=0)
    cached = EgressGuard(allow_hosts=open_name)

    def run(guard: EgressGuard) -> float:  # a loop of its own, on a thread (the caller's
        # thread may already run one: Playwright's sync API does)
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, _resolution_ms(guard, repeat)).result()

    return [
        f"  name resolution (hosts-file name, getaddrinfo in a thread) {run(uncached):.3f} ms a "
        f"connection; from the name cache {run(cached):.3f} ms (a DNS query, where the system "
        "caches nothing, comes on top of the first: not measurable here, no DNS server)"
    ]
