"""The egress comparison's own parts (`bench.egress._socks`, `bench.egress.cost`'s arms): the
proxies the arms put a Chromium behind must map and refuse names as the guard does on the
bench, and the checks-off guard must really skip the checks. No timing is asserted here."""

from __future__ import annotations

import argparse
import asyncio
import socket
import struct
from pathlib import Path

import pytest

from bench.egress._socks import PassThrough, UncheckedGuard, start_proxy
from bench.egress.cost import parse_arms
from browser_core import stop_pid
from browser_core.safety._egress import REP_HOST_UNREACHABLE, EgressGuard, Refused
from browser_core.testing import free_port
from tests._server import LocalServer, Reply

MAP = {"www.google.com": "127.0.0.1:4443", "*": ""}


def test_the_checks_off_guard_connects_where_the_guard_refuses() -> None:
    guarded, unchecked = EgressGuard(host_map=dict(MAP)), UncheckedGuard(host_map=dict(MAP))
    with pytest.raises(Refused):
        asyncio.run(guarded.decide("10.0.0.5", 80))
    assert asyncio.run(unchecked.decide("10.0.0.5", 80)) == [("10.0.0.5", 80)]
    assert asyncio.run(unchecked.decide("WWW.Google.com.", 443)) == [("127.0.0.1", 4443)]


@pytest.mark.parametrize("proxy", [UncheckedGuard(host_map=dict(MAP)), PassThrough(MAP)])
def test_every_proxy_fails_an_unmapped_name_as_the_guard_does(proxy: object) -> None:
    with pytest.raises(Refused) as caught:
        if isinstance(proxy, PassThrough):
            proxy.target("example.com", 443)
        else:
            asyncio.run(proxy.decide("example.com", 443))  # type: ignore[attr-defined]
    assert caught.value.reply == REP_HOST_UNREACHABLE


def _socks_get(proxy_port: int, host: str, port: int) -> tuple[int, bytes]:
    with socket.create_connection(("127.0.0.1", proxy_port), timeout=10) as sock:
        sock.sendall(b"\x05\x01\x00")
        assert sock.recv(2) == b"\x05\x00"
        name = host.encode()
        sock.sendall(b"\x05\x01\x00\x03" + bytes([len(name)]) + name + struct.pack("!H", port))
        reply = sock.recv(10)
        if reply[1] != 0:
            return reply[1], b""
        sock.sendall(f"GET /hello HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
        return 0, data


@pytest.mark.parametrize("mode", ["pass", "unchecked"])
def test_the_bench_proxies_relay_a_mapped_name_and_refuse_the_rest(
    mode: str, tmp_path: Path
) -> None:
    server = LocalServer()
    server.route("/hello", Reply("<p>hello through the proxy</p>"))
    port = free_port()
    pid = start_proxy(
        mode, port, {"www.google.com": f"127.0.0.1:{server.port}", "*": ""}, tmp_path / "log"
    )
    try:
        code, body = _socks_get(port, "www.google.com", 80)
        assert code == 0 and b"hello through the proxy" in body
        assert _socks_get(port, "example.com", 80)[0] == REP_HOST_UNREACHABLE
    finally:
        stop_pid(pid)
        server.stop()
    assert "example.com" in (tmp_path / "log").read_text(encoding="utf-8")  # one line a refusal


def test_arms_are_checked_on_the_command_line() -> None:
    assert parse_arms("guard,bare,socks") == ("guard", "bare", "socks")
    with pytest.raises(argparse.ArgumentTypeError, match="unknown arm nope"):
        parse_arms("bare,nope")
    with pytest.raises(argparse.ArgumentTypeError, match="must include bare"):
        parse_arms("guard,control")
