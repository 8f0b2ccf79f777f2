"""`stream-browser serve` against a local client that stalls instead of calling, and what the
service must never leak (the token into Chrome, key-bearing URLs into recordings).

A real service process (no Chrome needed: nothing here reaches the tool) on an ephemeral
port. Each test fails on a service that lets a connection hold its resources forever.
"""

from __future__ import annotations

import http.client
import json
import os
import resource
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_core._chrome import _chrome_env
from tests._service_proc import ServiceProc, start_service

# The service must close a stalled request within its request timeout (10 s) plus a margin
# for a loaded 2-core machine.
STALL_LIMIT_S = 25.0


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProc]:
    service = start_service(None, tmp_path_factory.mktemp("audit-service"))
    yield service
    assert service.stop() == 0


def _address(service: ServiceProc) -> tuple[str, int]:
    host, port = service.url.split("://", 1)[1].rsplit(":", 1)
    return host, int(port)


def _closed_by_server(sock: socket.socket, until: float) -> bool:
    """Read (and drop) whatever arrives until the server closes the connection."""
    while time.monotonic() < until:
        sock.settimeout(max(0.1, until - time.monotonic()))
        try:
            if not sock.recv(65536):
                return True
        except TimeoutError:
            return False
        except OSError:  # reset: closed as well
            return True
    return False


def _healthz(service: ServiceProc, timeout: float) -> int | None:
    host, port = _address(service)
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", "/healthz", headers={"Host": f"{host}:{port}"})
        return conn.getresponse().status
    except OSError:
        return None
    finally:
        conn.close()


def test_a_stalled_request_cannot_hold_a_connection_open(svc: ServiceProc) -> None:
    """Slowloris: no request, a request head that stops or trickles in a byte a second, a
    body that never comes (with the token, so the guard lets it through)."""
    host, port = _address(svc)
    head = f"POST /v1/browse HTTP/1.1\r\nHost: {host}:{port}\r\n"
    stalls = {
        "nothing sent": b"",
        "half a head": f"GET /healthz HTTP/1.1\r\nHost: {host}:{port}\r\n".encode(),
        "no body": (
            head + f"Authorization: Bearer {svc.token}\r\nContent-Type: application/json\r\n"
            "Content-Length: 100\r\n\r\n{"
        ).encode(),
        "chunked body that stops": (
            head + f"Authorization: Bearer {svc.token}\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n\r\n1\r\n{\r\n"
        ).encode(),
    }
    socks = {name: socket.create_connection((host, port)) for name in [*stalls, "trickled head"]}
    for name, data in stalls.items():
        socks[name].sendall(data)
    stop = threading.Event()

    def trickle() -> None:  # one byte a second: never a complete head
        with_header = b"GET /healthz HTTP/1.1\r\nX-Slow: " + b"a" * 1000
        for byte in with_header:
            if stop.wait(1.0):
                return
            try:
                socks["trickled head"].send(bytes([byte]))
            except OSError:
                return

    threading.Thread(target=trickle, daemon=True).start()
    until = time.monotonic() + STALL_LIMIT_S
    try:
        still_open = [name for name, sock in socks.items() if not _closed_by_server(sock, until)]
    finally:
        stop.set()
        for sock in socks.values():
            sock.close()
    assert still_open == [], f"held open for {STALL_LIMIT_S:.0f} s: {still_open}"
    assert _healthz(svc, 10) == 200


def test_idle_connections_cannot_lock_every_client_out(tmp_path: Path) -> None:
    """Any local user can connect to the TCP port (no token needed to open a socket). With
    the process's descriptor limit (systemd's default soft limit is 1024) lowered to 64 here,
    100 idle connections must not keep `/healthz` from answering once they have timed out."""
    service = start_service(None, tmp_path / "state")
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.prlimit(service.proc.pid, resource.RLIMIT_NOFILE, (64, hard))
        in_use = len(os.listdir(f"/proc/{service.proc.pid}/fd"))
        assert in_use < 32, in_use
        idle = [socket.create_connection(_address(service)) for _ in range(100)]
        try:
            assert _healthz(service, STALL_LIMIT_S + 5) == 200, "locked out by idle sockets"
        finally:
            for sock in idle:
                sock.close()
    finally:
        service.stop()


def test_get_mcp_does_not_hold_a_stream_open(svc: ServiceProc) -> None:
    """docs/mcp.md: the HTTP face is stateless with JSON replies, "no stream held open".
    A GET (what an MCP host sends to open the optional server-to-client SSE stream) must get
    an answer that ends (405: no SSE stream offered, as the MCP spec allows)."""
    host, port = _address(svc)
    with socket.create_connection((host, port)) as sock:
        sock.sendall(
            (
                f"GET /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {svc.token}"
                "\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n"
            ).encode()
        )
        sock.settimeout(2.0)
        first = sock.recv(65536)
        ended = _closed_by_server(sock, time.monotonic() + 10)
    assert ended, f"the GET /mcp stream is still open after 10 s: {first[:120]!r}"
    assert first.startswith(b"HTTP/1.1 405"), first[:120]


def test_the_service_token_is_not_given_to_the_broadcast_chrome(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Chrome that renders strangers' pages gets no API key (`_chrome_env` drops
    *_API_KEY); the bearer token that drives the service is a credential of the same kind."""
    monkeypatch.setenv("SB_SERVICE_TOKEN", "service-token-value")
    monkeypatch.setenv("GEMINI_API_KEY", "api-key-value")
    env = _chrome_env(None)
    assert "GEMINI_API_KEY" not in env
    assert "SB_SERVICE_TOKEN" not in env


def test_a_key_bearing_url_in_a_header_does_not_reach_the_har() -> None:
    """`_recording`: "key-bearing URLs ... never reach disk". An entry whose own URL is clean
    can still name one: the page it was loaded from (`Referer`) or where it redirects."""
    from browser_core._recording import scrub_har_data

    data: dict[str, Any] = {
        "log": {
            "entries": [
                {
                    "request": {
                        "url": "https://a.example/img.png",
                        "headers": [
                            {"name": "Referer", "value": "https://a.example/p?key=SECRET-1"},
                            {"name": "Accept", "value": "image/png"},
                        ],
                    },
                    "response": {
                        "status": 302,
                        "headers": [
                            {"name": "Location", "value": "https://b.example/?token=SECRET-2"}
                        ],
                        "redirectURL": "https://b.example/?token=SECRET-2",
                    },
                }
            ]
        }
    }
    report = scrub_har_data(data)
    assert report.kept == 1
    assert "SECRET" not in json.dumps(data)
    assert data["log"]["entries"][0]["request"]["headers"] == [
        {"name": "Accept", "value": "image/png"}
    ]
