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

from browser_core.chrome._process import child_env
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
        with conn.getresponse() as response:  # closed: its socket is not left to the collector
            return response.status
    except OSError:
        return None
    finally:
        conn.close()


@pytest.mark.slow
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
    """The Chrome that renders strangers' pages gets no API key (`child_env` drops
    *_API_KEY); the bearer token that drives the service is a credential of the same kind."""
    monkeypatch.setenv("SB_SERVICE_TOKEN", "service-token-value")
    monkeypatch.setenv("GEMINI_API_KEY", "api-key-value")
    env = child_env(None)
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


def _pipeliners(service: ServiceProc, count: int, requests: int) -> list[socket.socket]:
    """Connections that send `requests` pipelined `GET /healthz` and never read an answer."""
    host, port = _address(service)
    one = f"GET /healthz HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()
    socks = []
    for _ in range(count):
        sock = socket.create_connection((host, port))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # fills fast
        sock.sendall(one * requests)
        socks.append(sock)
    return socks


def test_connections_that_pipeline_and_never_read_cannot_keep_the_brain_out(
    svc: ServiceProc,
) -> None:
    """About 130 such connections used to keep the service from accepting anyone for as long
    as they stayed open. Three hundred of them are open here while the brain's client calls."""
    from search import client

    host, port = _address(svc)
    service = client.Service(f"http://{host}:{port}", svc.token)

    def timed() -> tuple[Any, float]:
        started = time.monotonic()
        answer = client.request("GET", "/v1/status", service=service, timeout=5)
        return answer, time.monotonic() - started

    idle = sorted(timed()[1] for _ in range(3))[1]  # this machine's load, same run
    socks = _pipeliners(svc, 300, 200)
    try:
        answer, elapsed = timed()
        assert answer is not None and answer[0] == 200, answer  # locked out before: None
        # a second, plus room for a loaded machine (about 0.1 s against 10 ms idle here)
        bound = 1.0 + 5 * idle
        assert elapsed < bound, f"answered after {elapsed:.2f} s (idle: {idle:.3f} s)"
        # and the service closed them (each is more than MAX_PIPELINED ahead of its answers)
        until = time.monotonic() + 10
        still_open = sum(not _closed_by_server(sock, until) for sock in socks[:20])
        assert still_open == 0
    finally:
        for sock in socks:
            sock.close()
    closed = [e for e in svc.events("service.connection_closed") if e["reason"] == "pipelined"]
    assert closed


@pytest.mark.slow
def test_a_peer_that_stops_reading_its_answers_is_closed(svc: ServiceProc) -> None:
    """Requests sent as a client would (10 ms apart), answers never read: once the socket's
    buffers are full the answers stall and the requests pile up behind them; the service
    closes the connection (more than MAX_PIPELINED unanswered, or WRITE_STALL_S unread)."""
    host, port = _address(svc)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: a small window
    sock.connect((host, port))
    one = (
        f"GET /openapi.json HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Authorization: Bearer {svc.token}\r\n\r\n"
    ).encode()  # about 12 KB an answer

    def stalled() -> list[dict[str, Any]]:
        events = svc.events("service.connection_closed")
        return [e for e in events if e["reason"] in ("not reading", "pipelined")]

    before = len(stalled())
    try:
        for _ in range(600):  # 7 MB of answers, more than loopback's socket buffers hold
            try:
                sock.sendall(one)
            except OSError:
                break  # closed by the service
            time.sleep(0.01)
        assert _wait_for(lambda: len(stalled()) > before, 20)
        assert _closed_by_server(sock, time.monotonic() + 5)
    finally:
        sock.close()


def test_at_the_connection_limit_a_new_client_pushes_out_the_longest_idle(
    tmp_path: Path,
) -> None:
    service = start_service(None, tmp_path / "state")
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.prlimit(service.proc.pid, resource.RLIMIT_NOFILE, (128, hard))  # room for 32
        idle = [socket.create_connection(_address(service)) for _ in range(60)]
        try:
            started = time.monotonic()
            assert _healthz(service, 5) == 200
            assert time.monotonic() - started < 1.0  # no wait for the 10 s request deadline
            assert _closed_by_server(idle[0], time.monotonic() + 5)  # the oldest went first
        finally:
            for sock in idle:
                sock.close()

        def pushed() -> list[dict[str, Any]]:
            return [e for e in service.events("service.connection_closed") if "idle_s" in e]

        assert _wait_for(lambda: pushed() != [], 5)
        assert {e["reason"] for e in pushed()} == {"pushed out"}
    finally:
        service.stop()


def _wait_for(predicate: Any, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return False


DEEP = b"[" * 5000 + b"]" * 5000
MCP_CALL = (
    b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "browse", '
    b'"arguments": {"query": "weather \\ud83d"}}}'
)
MALFORMED = {
    "deep /v1/browse": ("POST", "/v1/browse", b'{"query": ' + DEEP + b"}"),
    "deep /mcp": ("POST", "/mcp", b'{"jsonrpc": "2.0", "id": 1, "params": ' + DEEP + b"}"),
    "deep /v1/status": ("GET", "/v1/status", DEEP),
    "deep /readyz": ("GET", "/readyz", DEEP),
    "deep /metrics": ("GET", "/metrics", DEEP),
    "deep /healthz": ("GET", "/healthz", DEEP),
    "surrogate /v1/browse": ("POST", "/v1/browse", b'{"query": "weather \\ud83d"}'),
    "surrogate /mcp": ("POST", "/mcp", MCP_CALL),
    "not JSON /v1/browse": ("POST", "/v1/browse", b'{"query": "x"'),
    "not UTF-8 /mcp": ("POST", "/mcp", b'{"query": "\xff\xfe"}'),
}


def _post(service: ServiceProc, method: str, path: str, body: bytes) -> tuple[int, str, bytes]:
    host, port = _address(service)
    conn = http.client.HTTPConnection(host, port, timeout=30)
    headers = {
        "Host": f"{host}:{port}",
        "Authorization": f"Bearer {service.token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.getheader("Content-Type", ""), response.read()
    finally:
        conn.close()


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_input_is_a_4xx_with_one_json_error_body_and_no_traceback(
    svc: ServiceProc, case: str
) -> None:
    method, path, body = MALFORMED[case]
    status, content_type, raw = _post(svc, method, path, body)
    assert 400 <= status < 500, (status, raw[:300])
    assert content_type.startswith("application/json")
    error = json.loads(raw)["error"]
    assert set(error) == {"kind", "message", "fix"}
    assert error["kind"] == "bad-arguments"
    time.sleep(0.2)  # the service's log arrives through a pipe
    assert "Traceback" not in svc.text
    for line in svc.output:
        assert line.startswith(("{", "stream-browser: serving on")), line[:200]
