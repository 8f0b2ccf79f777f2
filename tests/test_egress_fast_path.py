"""The egress guard's fast path: the name cache and the relay.

The cache keeps what a name resolved to for a short while; every use is checked again, so it
can never send a connection to an address that was not checked, and an expired entry is
resolved and checked again before anything is connected. The relay copies bytes unchanged,
in large reads, ACKing each read at once. Only loopback is ever connected to: a public test
address is sent to a loopback stand-in by the connector, which fails the test for anything
else.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import random
import socket
from collections.abc import Callable
from typing import Any

import pytest

from browser_core.safety._egress import (
    NAME_CACHE_SIZE,
    NAME_TTL_S,
    REP_NOT_ALLOWED,
    REP_OK,
    EgressGuard,
    Refused,
    _pipe,
    open_tcp,
)
from browser_core.safety._policy import address_reason

PUBLIC_IP = "93.184.216.34"
OTHER_PUBLIC_IP = "203.0.113.7"  # documentation range; only ever a resolver's answer here
INTERNAL = ["127.0.0.1", "10.1.2.3", "169.254.169.254", "192.168.1.1", "::1"]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Dns:
    """A resolver whose answers the test changes; counts its calls per name."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append(host)
        await asyncio.sleep(0)
        answer = self.answers[host]
        if isinstance(answer, BaseException):
            raise answer
        return list(answer)


class Loopback:
    """A connector that sends the public test address to a loopback server and records every
    address it is asked for; anything not loopback is a violation (and is not connected)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.asked: list[str] = []
        self.violations: list[str] = []

    async def __call__(self, address: str, port: int) -> Any:
        self.asked.append(address)
        if address == PUBLIC_IP:
            return await open_tcp("127.0.0.1", self.port)
        if not ipaddress.ip_address(address).is_loopback:
            self.violations.append(address)
        raise OSError("test connector: only the public stand-in")


async def _echo_server() -> tuple[asyncio.Server, int]:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(1 << 16):
            writer.write(data)
            await writer.drain()
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    return server, int(server.sockets[0].getsockname()[1])


async def _socks_connect(port: int, host: str, target_port: int) -> tuple[int, Any, Any]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"\x05\x01\x00")
    assert await reader.readexactly(2) == b"\x05\x00"
    name = host.encode()
    writer.write(bytes([5, 1, 0, 3, len(name)]) + name + target_port.to_bytes(2, "big"))
    reply = await reader.readexactly(10)
    return reply[1], reader, writer


async def _close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()


def _guarded(scenario: Callable[[EgressGuard, Dns, Loopback, Clock], Any]) -> Any:
    """Run `scenario` against a real guard (a public echo stand-in behind it on loopback)."""

    async def main() -> Any:
        server, port = await _echo_server()
        dns, net, clock = Dns({}), Loopback(port), Clock()
        guard = EgressGuard(resolver=dns, connector=net, clock=clock)
        try:
            return await scenario(guard, dns, net, clock)
        finally:
            await guard.close()
            server.close()
            await server.wait_closed()
            assert net.violations == [], "the guard asked to connect off loopback"

    return asyncio.run(main())


# -- the name cache -----------------------------------------------------------------------


def test_a_cached_name_keeps_its_checked_address_when_its_answer_turns_internal() -> None:
    """DNS rebinding inside the cache's life: the name now answers loopback or metadata, but
    the guard connects only to the public address it checked, without asking again."""

    async def scenario(guard: EgressGuard, dns: Dns, net: Loopback, clock: Clock) -> None:
        port = await guard.start()
        for answer in ([PUBLIC_IP], ["127.0.0.1"], ["169.254.169.254"]):
            dns.answers["rebind.test"] = answer
            reply, reader, writer = await _socks_connect(port, "rebind.test", 80)
            assert reply == REP_OK
            writer.write(b"ping")
            assert await reader.readexactly(4) == b"ping"  # it reached the public stand-in
            await _close(writer)
            clock.now += 1.0
        assert dns.calls == ["rebind.test"]
        assert set(net.asked) == {PUBLIC_IP}

    _guarded(scenario)


@pytest.mark.parametrize("internal", ["127.0.0.1", "169.254.169.254", "10.1.2.3"])
def test_an_expired_entry_is_resolved_and_checked_again_before_connecting(internal: str) -> None:
    async def scenario(guard: EgressGuard, dns: Dns, net: Loopback, clock: Clock) -> None:
        port = await guard.start()
        dns.answers["moving.test"] = [PUBLIC_IP]
        reply, _, writer = await _socks_connect(port, "moving.test", 80)
        await _close(writer)
        assert reply == REP_OK and net.asked == [PUBLIC_IP]
        dns.answers["moving.test"] = [internal]
        clock.now += NAME_TTL_S + 0.1
        reply, _, writer = await _socks_connect(port, "moving.test", 80)
        await _close(writer)
        assert reply == REP_NOT_ALLOWED
        assert dns.calls == ["moving.test", "moving.test"]  # resolved again
        assert net.asked == [PUBLIC_IP]  # refused before connecting: nothing new was asked
        assert guard.refusals[-1][2].endswith("(resolved from the name)")

    _guarded(scenario)


def test_an_entry_still_alive_is_not_resolved_again() -> None:
    async def scenario(guard: EgressGuard, dns: Dns, net: Loopback, clock: Clock) -> None:
        dns.answers["steady.test"] = [PUBLIC_IP]
        for _ in range(5):
            assert await guard.decide("steady.test", 443) == [(PUBLIC_IP, 443)]
            clock.now += NAME_TTL_S / 10
        assert dns.calls == ["steady.test"]
        clock.now += NAME_TTL_S
        await guard.decide("steady.test", 443)
        assert dns.calls == ["steady.test", "steady.test"]

    _guarded(scenario)


def test_a_cached_answer_is_checked_on_every_use() -> None:
    """An answer with one internal address is refused each time, the cached time too, and
    nothing is connected; an allowed host:port does not open the name on another port."""

    async def scenario(guard: EgressGuard, dns: Dns, net: Loopback, clock: Clock) -> None:
        dns.answers["mixed.test"] = [PUBLIC_IP, "10.1.2.3"]
        for _ in range(3):
            with pytest.raises(Refused, match="private"):
                await guard.decide("mixed.test", 443)
        assert dns.calls == ["mixed.test"]  # the later refusals came from the cache
        assert net.asked == []

    _guarded(scenario)


def test_an_allowed_name_and_port_does_not_open_the_cached_name_elsewhere() -> None:
    async def scenario() -> None:
        dns = Dns({"vm": ["127.0.0.1"]})
        guard = EgressGuard(allow_hosts=("vm:8000",), resolver=dns, clock=Clock())
        assert await guard.decide("vm", 8000) == [("127.0.0.1", 8000)]
        with pytest.raises(Refused, match="loopback"):
            await guard.decide("vm", 8001)
        assert await guard.decide("vm", 8000) == [("127.0.0.1", 8000)]

    asyncio.run(scenario())


def test_no_answer_is_ever_handed_out_unchecked_over_many_changes() -> None:
    """A name's answer changes at random between public and internal addresses while time
    passes at random: every address the guard decides on passed the address rules, and it is
    one the resolver gave less than the cache's life ago."""

    async def scenario() -> None:
        rng = random.Random(27)
        clock = Clock()
        dns = Dns({})
        guard = EgressGuard(resolver=dns, clock=clock)
        given: dict[str, list[tuple[float, set[str]]]] = {}
        for _ in range(400):
            name = rng.choice(["a.test", "b.test", "c.test"])
            answer = rng.sample([PUBLIC_IP, OTHER_PUBLIC_IP, *INTERNAL], rng.randint(1, 3))
            dns.answers[name] = answer
            calls = len(dns.calls)
            try:
                decided = await guard.decide(name, 443)
            except Refused:
                decided = []
            if len(dns.calls) > calls:
                given.setdefault(name, []).append((clock.now, set(answer)))
            for address, _ in decided:
                assert address_reason(address) is None, address
                assert any(
                    address in addresses and clock.now - at < NAME_TTL_S
                    for at, addresses in given[name]
                ), address
            clock.now += rng.choice([0.0, 1.0, 7.0, NAME_TTL_S / 2, NAME_TTL_S])
        assert len(dns.calls) < 400  # the cache did answer some of them

    asyncio.run(scenario())


def test_connections_to_one_name_at_once_share_one_lookup() -> None:
    async def scenario() -> None:
        dns = Dns({"page.test": [PUBLIC_IP]})
        guard = EgressGuard(resolver=dns, clock=Clock())
        results = await asyncio.gather(*(guard.decide("page.test", 443) for _ in range(10)))
        assert results == [[(PUBLIC_IP, 443)]] * 10
        assert dns.calls == ["page.test"]

    asyncio.run(scenario())


def test_failed_and_empty_lookups_are_not_kept() -> None:
    async def scenario() -> None:
        dns = Dns({"flaky.test": OSError("no answer")})
        guard = EgressGuard(resolver=dns, clock=Clock())
        with pytest.raises(Refused, match="not resolved"):
            await guard.decide("flaky.test", 443)
        dns.answers["flaky.test"] = []
        with pytest.raises(Refused, match="not resolved"):
            await guard.decide("flaky.test", 443)
        dns.answers["flaky.test"] = [PUBLIC_IP]
        assert await guard.decide("flaky.test", 443) == [(PUBLIC_IP, 443)]
        assert dns.calls == ["flaky.test"] * 3

    asyncio.run(scenario())


def test_the_cache_holds_a_bounded_number_of_names() -> None:
    async def scenario() -> None:
        dns = Dns({f"n{i}.test": [PUBLIC_IP] for i in range(4)})
        guard = EgressGuard(resolver=dns, clock=Clock(), name_cache_size=3)
        for i in range(4):
            await guard.decide(f"n{i}.test", 443)
        await guard.decide("n3.test", 443)  # still kept
        await guard.decide("n0.test", 443)  # the oldest went first
        assert dns.calls == ["n0.test", "n1.test", "n2.test", "n3.test", "n0.test"]

    asyncio.run(scenario())
    assert 0 < NAME_CACHE_SIZE <= 4096 and 0 < NAME_TTL_S <= 300  # bounded as documented


def test_a_zero_life_turns_the_cache_off() -> None:
    async def scenario() -> None:
        dns = Dns({"x.test": [PUBLIC_IP]})
        guard = EgressGuard(resolver=dns, name_ttl_s=0)
        for _ in range(3):
            await guard.decide("x.test", 443)
        assert dns.calls == ["x.test"] * 3

    asyncio.run(scenario())


# -- the relay ------------------------------------------------------------------------------


def test_the_relay_carries_large_bodies_both_ways_byte_for_byte() -> None:
    body = random.Random(5).randbytes(3 * 1024 * 1024 + 17)

    async def scenario(guard: EgressGuard, dns: Dns, net: Loopback, clock: Clock) -> None:
        port = await guard.start()
        reply, reader, writer = await _socks_connect(port, PUBLIC_IP, 80)
        assert reply == REP_OK

        async def send() -> None:
            writer.write(body)
            await writer.drain()
            writer.write_eof()  # the half-close reaches the server, which then closes

        _, echoed = await asyncio.gather(send(), reader.read())
        await _close(writer)
        assert echoed == body

    _guarded(scenario)


class _CountingReader:
    """A real stream reader that counts the reads that returned data."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader
        self.reads = 0

    async def read(self, n: int) -> bytes:
        data = await self.reader.read(n)
        self.reads += bool(data)
        return data


class _RecordingSocket:
    """A real TCP socket that records the options set on it."""

    def __init__(self, sock: Any) -> None:
        self.sock = sock
        self.options: list[tuple[int, int, int]] = []

    def setsockopt(self, level: int, option: int, value: int) -> None:
        self.options.append((level, option, value))
        self.sock.setsockopt(level, option, value)


@pytest.mark.skipif(not hasattr(socket, "TCP_QUICKACK"), reason="TCP_QUICKACK is Linux only")
def test_the_relay_acks_each_read_at_once_and_both_sockets_have_nodelay() -> None:
    """A server that leaves Nagle on waits for the ACK of its last segments: the relay sends
    it after every read instead of letting the kernel delay it (40 ms on Linux)."""

    async def scenario() -> tuple[list[tuple[int, int, int]], int, int, int]:
        server, port = await _echo_server()
        up_reader, up_writer = await open_tcp("127.0.0.1", port)
        held: list[asyncio.StreamWriter] = []
        sink_server = await asyncio.start_server(lambda r, w: held.append(w), "127.0.0.1", 0)
        _, out_writer = await open_tcp("127.0.0.1", sink_server.sockets[0].getsockname()[1])
        source = _RecordingSocket(up_writer.get_extra_info("socket"))
        reader = _CountingReader(up_reader)
        nodelay = [
            w.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            for w in (up_writer, out_writer)
        ]
        relay = asyncio.ensure_future(_pipe(reader, out_writer, source))  # type: ignore[arg-type]
        for _ in range(3):
            up_writer.write(b"x" * 1000)
            await up_writer.drain()
            await asyncio.sleep(0.05)  # one echo, one read of the relay
        up_writer.close()
        await asyncio.wait_for(relay, 5)
        await _close(up_writer)
        for writer in (out_writer, *held):
            await _close(writer)
        for s in (server, sink_server):
            s.close()
            await s.wait_closed()
        return source.options, reader.reads, nodelay[0], nodelay[1]

    options, reads, up_nodelay, out_nodelay = asyncio.run(scenario())
    quickack = (socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
    assert reads >= 1 and options == [quickack] * reads
    assert up_nodelay and out_nodelay


# -- the handshake --------------------------------------------------------------------------


def test_the_greeting_is_answered_before_the_client_has_sent_it() -> None:
    """Chrome offers "no authentication" and waits for the answer before it sends CONNECT:
    the answer is already on its way when the connection opens."""

    async def scenario(guard: EgressGuard, *_: Any) -> bytes:
        port = await guard.start()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            return await asyncio.wait_for(reader.readexactly(2), 5)  # nothing sent yet
        finally:
            await _close(writer)

    assert _guarded(scenario) == b"\x05\x00"


@pytest.mark.parametrize("greeting", [b"\x05\x01\x02", b"\x04\x01\x00"])
def test_a_client_that_does_not_offer_no_authentication_is_closed_unconnected(
    greeting: bytes,
) -> None:
    """SOCKS5 without the no-authentication method, or another SOCKS version: the guard
    closes the connection and never reads a CONNECT or connects anywhere."""

    async def scenario(guard: EgressGuard, dns: Dns, net: Loopback, _: Clock) -> bytes:
        port = await guard.start()
        dns.answers["public.test"] = [PUBLIC_IP]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        name = b"public.test"
        writer.write(greeting + bytes([5, 1, 0, 3, len(name)]) + name + (443).to_bytes(2, "big"))
        try:
            received = await asyncio.wait_for(reader.read(), 5)  # up to the guard's close
        finally:
            await _close(writer)
        assert net.asked == [] and dns.calls == []
        return received

    assert _guarded(scenario) == b"\x05\x00"  # the early answer, then end of file
