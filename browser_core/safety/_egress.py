"""The egress guard: a small SOCKS5 forward proxy the broadcast Chrome is started behind.

Chrome started with `--proxy-server=socks5://127.0.0.1:P --proxy-bypass-list=<-loopback>`
sends every connection here (navigations, redirect hops, sub-resources, WebSockets, workers,
service workers) with the host name unresolved. The guard resolves the name (an answer is
reused for at most `NAME_TTL_S`, see `NameCache`), checks every address on every use, refuses
when any is internal (the rules of `_policy`) unless `SB_ALLOW_HOSTS` opens the host, and
connects to the very address it checked, so there is no DNS-rebinding window and no URL
parser differential left to exploit. A refusal is a SOCKS failure reply: Chrome fails with
`net::ERR_SOCKS_CONNECTION_FAILED` and the target receives nothing.

Run as its own process (`python -m browser_core.safety._egress --port P --watch-pid CHROME_PID`)
whose life follows Chrome's: it exits when Chrome exits and outlives the service that started it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import json
import os
import re
import socket
import struct
import sys
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

import structlog

from ..chrome import WEBRTC_POLICY, pid_alive
from ._policy import address_reason, host_allowed, name_reason

if TYPE_CHECKING:
    from .._settings import Settings

log = structlog.get_logger("browser_core.egress")

Resolver = Callable[[str, int], Awaitable[list[str]]]
Connector = Callable[[str, int], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]

SOCKS_VERSION = 5
REP_OK, REP_FAILURE, REP_NOT_ALLOWED = 0, 1, 2
REP_HOST_UNREACHABLE, REP_REFUSED, REP_BAD_COMMAND, REP_BAD_ADDRESS = 4, 5, 7, 8
# One read of the relay: what asyncio's transport takes from a socket at once. The streams'
# limit is the same, so a reader pauses its socket only past two reads' worth unsent.
_CHUNK = 256 * 1024
# How long a name's answer is reused, and for how many names (least recently used go first).
# Chrome keeps system-resolver answers for 60 s itself, but behind a socks5 proxy it does no
# DNS, so without this every connection of a page was a getaddrinfo thread hop (and a query).
NAME_TTL_S = 60.0
NAME_CACHE_SIZE = 512
# Linux: ACK what was read at once. A server that leaves Nagle on holds its last small segment
# until the previous ones are acked; without this the guard's kernel may delay that ACK by
# 40 ms (measured on about half of the heavy page's keep-alive loads).
_QUICKACK = getattr(socket, "TCP_QUICKACK", None)


class Refused(Exception):
    """The guard will not connect; `reply` is the SOCKS reply code sent to Chrome."""

    def __init__(self, reason: str, reply: int = REP_NOT_ALLOWED) -> None:
        super().__init__(reason)
        self.reason = reason
        self.reply = reply


async def system_resolver(host: str, port: int) -> list[str]:
    """All addresses of `host` from the system resolver (runs in a worker thread)."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def open_tcp(address: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection(address, port, limit=_CHUNK)


class NameCache:
    """What `resolver` answered for (name, port), kept for `ttl_s` seconds, at most `size`
    entries (least recently used go first); concurrent lookups of one key share one call,
    and failures and empty answers are not kept.

    It keeps answers, not verdicts: the guard checks the addresses on every use, so an entry
    can only ever send a connection to an address that passed the checks then. A name that
    changes its answer (DNS rebinding) keeps its old, checked address until the entry
    expires; then it is resolved and checked again.
    """

    def __init__(
        self,
        resolver: Resolver,
        timeout_s: float,
        ttl_s: float = NAME_TTL_S,
        size: int = NAME_CACHE_SIZE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.resolver, self.timeout_s, self.ttl_s, self.size = resolver, timeout_s, ttl_s, size
        self.clock = clock
        self._answers: OrderedDict[tuple[str, int], tuple[float, list[str]]] = OrderedDict()
        self._pending: dict[tuple[str, int], asyncio.Task[list[str]]] = {}

    async def resolve(self, host: str, port: int) -> list[str]:
        """The addresses of `host` (may raise what the resolver raises, or `TimeoutError`)."""
        key = (host, port)
        answer = self._answers.get(key)
        if answer is not None and answer[0] > self.clock():
            self._answers.move_to_end(key)
            return list(answer[1])
        task = self._pending.get(key)
        if task is None:
            task = self._pending[key] = asyncio.ensure_future(self._lookup(key))
            task.add_done_callback(lambda _: self._pending.pop(key, None))
        return list(await asyncio.shield(task))

    async def _lookup(self, key: tuple[str, int]) -> list[str]:
        addresses = list(await asyncio.wait_for(self.resolver(*key), self.timeout_s))
        if addresses and self.ttl_s > 0 and self.size > 0:
            self._answers[key] = (self.clock() + self.ttl_s, addresses)
            self._answers.move_to_end(key)
            while len(self._answers) > self.size:
                self._answers.popitem(last=False)
        return addresses

    def clear(self) -> None:
        """Forget every answer and stop the lookups in flight."""
        self._answers.clear()
        for task in list(self._pending.values()):
            task.cancel()


@dataclass
class EgressGuard:
    """The SOCKS5 server (no auth, CONNECT only). `resolver` and `connector` are seams for tests.

    `host_map` sends a name to a fixed `address:port` (like Chrome's `--host-resolver-rules`
    MAP, for the bench and recorded sessions); a mapped name is trusted as configured.
    `name_ttl_s` / `name_cache_size` bound the `NameCache` (0 turns it off); `clock` is its
    seam for tests.
    """

    allow_hosts: tuple[str, ...] = ()
    resolver: Resolver = system_resolver
    connector: Connector = open_tcp
    host_map: dict[str, str] = field(default_factory=dict)
    resolve_timeout_s: float = 5.0
    connect_timeout_s: float = 10.0
    name_ttl_s: float = NAME_TTL_S
    name_cache_size: int = NAME_CACHE_SIZE
    clock: Callable[[], float] = time.monotonic
    # The latest refusals (host, port, reason), for tests and status; bounded, as the guard
    # runs for as long as the broadcast does.
    refusals: deque[tuple[str, int, str]] = field(default_factory=lambda: deque(maxlen=256))
    _server: asyncio.Server | None = field(default=None, repr=False)
    _clients: set[asyncio.Task[None]] = field(default_factory=set, repr=False)
    names: NameCache = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.names = NameCache(
            self.resolver,
            self.resolve_timeout_s,
            self.name_ttl_s,
            self.name_cache_size,
            self.clock,
        )

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        """Listen on `host:port` (0 = any free port); returns the port."""
        self._server = await asyncio.start_server(self._handle, host, port, limit=_CHUNK)
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        """Stop listening and end every open connection (a relay left running would outlive
        its event loop, its sockets closed by nobody)."""
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
            self._server = None
        self.names.clear()
        for task in list(self._clients):
            task.cancel()
        if self._clients:
            await asyncio.wait(list(self._clients), timeout=2.0)
        await asyncio.sleep(0)  # the transports' own close callbacks run

    async def decide(self, host: str, port: int) -> list[tuple[str, int]]:
        """The addresses to connect to, in order, or `Refused` with the reason."""
        host = normal_host(host)
        mapped = self.mapped(host)
        if mapped is not None:
            return mapped
        allowed = host_allowed(host, port, self.allow_hosts)
        reason = None if allowed else name_reason(host)
        if reason:
            raise Refused(reason)
        addresses = [host] if _is_ip(host) else await self._resolve(host, port)
        for address in [] if allowed else addresses:
            reason = address_reason(address)
            if reason:
                raise Refused(f"{reason} (resolved from the name)" if address != host else reason)
        return [(address, port) for address in addresses]

    def mapped(self, host: str) -> list[tuple[str, int]] | None:
        """Where `host_map` sends `host` (a `normal_host`), None when it is not mapped;
        `Refused` for a name the map's `*` leaves unresolved."""
        target = self.host_map.get(host)
        if target:
            address, _, mapped_port = target.rpartition(":")
            return [(address.strip("[]"), int(mapped_port))]
        if "*" in self.host_map and not _is_ip(host):  # like Chrome's `MAP * ~NOTFOUND`
            raise Refused("name not resolved (not mapped)", REP_HOST_UNREACHABLE)
        return None

    async def _resolve(self, host: str, port: int) -> list[str]:
        try:
            addresses = await self.names.resolve(host, port)
        except (OSError, UnicodeError, TimeoutError) as exc:
            raise Refused(
                f"name not resolved ({type(exc).__name__})", REP_HOST_UNREACHABLE
            ) from exc
        if not addresses:
            raise Refused("name not resolved", REP_HOST_UNREACHABLE)
        return addresses

    async def _connect(
        self, targets: list[tuple[str, int]]
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        last: BaseException | None = None
        for address, port in targets:
            try:
                async with asyncio.timeout(
                    self.connect_timeout_s
                ):  # no extra task, unlike wait_for
                    return await self.connector(address, port)
            except (OSError, TimeoutError) as exc:
                last = exc
        raise Refused(f"connection failed ({type(last).__name__})", REP_REFUSED)

    # -- one client -------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._clients.add(task)
        try:
            await self._serve_client(reader, writer)
        finally:
            self._clients.discard(task)

    async def _serve_client(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        upstream: asyncio.StreamWriter | None = None
        try:
            async with asyncio.timeout(10.0):  # in this task: wait_for would start another
                host, port = await _socks_request(reader, writer)
            try:
                targets = await self.decide(host, port)
                up_reader, upstream = await self._connect(targets)
            except Refused as exc:
                self._refused(host, port, exc)
                await _reply(writer, exc.reply)
                return
            await _reply(writer, REP_OK)
            await asyncio.gather(
                _pipe(reader, upstream, writer.get_extra_info("socket")),
                _pipe(up_reader, writer, upstream.get_extra_info("socket")),
            )
        except (Refused, OSError, TimeoutError, asyncio.IncompleteReadError, ValueError):
            return
        finally:
            for stream in (upstream, writer):
                if stream is not None:
                    with contextlib.suppress(Exception):
                        stream.close()

    def _refused(self, host: str, port: int, exc: Refused) -> None:
        self.refusals.append((host, port, exc.reason))
        if exc.reply == REP_NOT_ALLOWED:
            log.warning("egress.refused", host=host[:253], port=port, reason=exc.reason)
        else:  # not resolvable or not answering: the web's problem, not a policy event
            log.info("egress.failed", host=host[:253], port=port, reason=exc.reason)


def normal_host(host: str) -> str:
    """A SOCKS request's host as the guard compares it: no brackets, no final dot, lower case."""
    return host.strip("[]").rstrip(".").lower()


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


async def _socks_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> tuple[str, int]:
    """Read the greeting and the CONNECT request; returns (host, port).

    The greeting's answer ("no authentication") goes out before the greeting is read: Chrome
    always offers that method and waits for the answer before it sends CONNECT, so this
    takes the guard's own wake-up off every connection's critical path. A client that did
    not offer it is closed."""
    writer.write(bytes([SOCKS_VERSION, 0]))
    version, count = await reader.readexactly(2)
    methods = await reader.readexactly(count)
    if version != SOCKS_VERSION or 0 not in methods:
        raise Refused("unsupported SOCKS greeting", REP_FAILURE)
    version, command, _, kind = await reader.readexactly(4)
    host = await _read_address(reader, kind)
    (port,) = struct.unpack("!H", await reader.readexactly(2))
    if host is None:
        await _reply(writer, REP_BAD_ADDRESS)
        raise Refused("unsupported address type", REP_BAD_ADDRESS)
    if command != 1:
        await _reply(writer, REP_BAD_COMMAND)
        raise Refused("only CONNECT is supported", REP_BAD_COMMAND)
    return host, port


async def _read_address(reader: asyncio.StreamReader, kind: int) -> str | None:
    if kind == 1:
        return socket.inet_ntop(socket.AF_INET, await reader.readexactly(4))
    if kind == 4:
        return socket.inet_ntop(socket.AF_INET6, await reader.readexactly(16))
    if kind == 3:
        (size,) = await reader.readexactly(1)
        return (await reader.readexactly(size)).decode("ascii", "replace")
    return None


async def _reply(writer: asyncio.StreamWriter, code: int) -> None:
    writer.write(bytes([SOCKS_VERSION, code, 0, 1, 0, 0, 0, 0, 0, 0]))
    with contextlib.suppress(OSError):
        await writer.drain()


def _quickack(sock: socket.socket | None) -> None:
    if _QUICKACK is not None and sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, _QUICKACK, 1)


async def _pipe(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, source: socket.socket | None
) -> None:
    """Copy `reader` to `writer` until end of file; `source` is the socket read from (its
    ACK goes out at once after each read, see `_QUICKACK`). Both sockets have TCP_NODELAY
    (asyncio sets it on every TCP transport); `drain` only waits while `writer` is full."""
    try:
        while data := await reader.read(_CHUNK):
            _quickack(source)
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (OSError, RuntimeError):
        with contextlib.suppress(Exception):
            writer.close()


# -- is the broadcast Chrome behind it? -------------------------------------------------------

_PROXY_FLAG = re.compile(r"^--proxy-server=socks5://127\.0\.0\.1:(\d+)$")
_BYPASS_FLAG = "--proxy-bypass-list=<-loopback>"
_RESTART = "stop that Chrome and start it with `stream-browser chrome` (which starts the guard)"


@dataclass(frozen=True)
class EgressStatus:
    """Whether the Chrome at the CDP endpoint runs behind our guard.

    `state`: guarded | missing (Chrome started without it) | down (the guard process is
    gone, so Chrome has no network) | unknown (Chrome is not on this machine, or not found).
    """

    state: Literal["guarded", "missing", "down", "unknown"]
    detail: str
    hint: str = ""
    chrome_pid: int | None = None
    proxy_port: int | None = None
    proxy_pid: int | None = None

    @property
    def ok(self) -> bool:
        return self.state == "guarded"


def _cmdlines() -> Iterable[tuple[int, list[str]]]:
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        yield int(entry), [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]


def _chrome_process(cdp_port: int) -> tuple[int, list[str]] | None:
    flag = f"--remote-debugging-port={cdp_port}"
    for pid, args in _cmdlines():
        if flag in args and not any(a.startswith("--type=") for a in args):
            return pid, args
    return None


def _guard_pid(proxy_port: int) -> int | None:
    for pid, args in _cmdlines():
        if "browser_core.safety._egress" in args and str(proxy_port) in args and pid_alive(pid):
            return pid
    return None


def _webrtc_policy(args: list[str]) -> str | None:
    """`webrtc.ip_handling_policy` in the profile Chrome was started with (None: unknown)."""
    values: dict[str, str] = {}
    for arg in args:
        for flag in ("--user-data-dir=", "--profile-directory="):
            if arg.startswith(flag):
                values[flag] = arg[len(flag) :]
    folder = values.get("--user-data-dir=")
    if not folder:
        return None
    path = Path(folder) / values.get("--profile-directory=", "Default") / "Preferences"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return str(data["webrtc"]["ip_handling_policy"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def egress_status(settings: Settings) -> EgressStatus:
    """Tell whether the Chrome at `settings.cdp_endpoint` runs behind the egress guard.

    Reads the local process table (Linux `/proc`): Chrome's own command line must send
    everything through a SOCKS5 proxy on loopback, and that proxy must be our guard.
    """
    parts = urlsplit(settings.cdp_endpoint)
    if (parts.hostname or "") not in ("127.0.0.1", "localhost", "::1") or not parts.port:
        return EgressStatus(
            "unknown",
            f"Chrome at {settings.cdp_endpoint} is not on this machine: cannot tell whether "
            "it runs behind the egress guard",
            "run Chrome on this machine with `stream-browser chrome`",
        )
    found = _chrome_process(parts.port)
    if found is None:
        return EgressStatus(
            "unknown",
            f"no Chrome process with --remote-debugging-port={parts.port} is visible here",
            "start it with `stream-browser chrome`",
        )
    pid, args = found
    proxy = next((m for m in map(_PROXY_FLAG.match, args) if m), None)
    if proxy is None or _BYPASS_FLAG not in args:
        return EgressStatus(
            "missing",
            f"egress guard missing: Chrome (pid {pid}) was started without it, so its pages "
            "can reach internal addresses (only the in-page checks stand in the way)",
            _RESTART,
            chrome_pid=pid,
        )
    proxy_port = int(proxy.group(1))
    if _webrtc_policy(args) != WEBRTC_POLICY:
        return EgressStatus(
            "missing",
            f"egress guard bypassed: Chrome (pid {pid}) lets WebRTC send UDP around the guard "
            f"(its profile does not set webrtc.ip_handling_policy={WEBRTC_POLICY}), so its "
            "pages can reach internal addresses over UDP",
            _RESTART,
            chrome_pid=pid,
            proxy_port=proxy_port,
        )
    guard = _guard_pid(proxy_port)
    if guard is None:
        return EgressStatus(
            "down",
            f"egress guard down: Chrome (pid {pid}) sends its traffic to 127.0.0.1:{proxy_port} "
            "but no guard runs there, so it has no network",
            _RESTART,
            chrome_pid=pid,
            proxy_port=proxy_port,
        )
    return EgressStatus(
        "guarded",
        f"Chrome (pid {pid}) runs behind the egress guard (pid {guard}, 127.0.0.1:{proxy_port})",
        chrome_pid=pid,
        proxy_port=proxy_port,
        proxy_pid=guard,
    )


# -- the process ------------------------------------------------------------------------------


async def _watch(pid: int, stop: asyncio.Event) -> None:
    while pid_alive(pid):
        await asyncio.sleep(0.25)
    log.info("egress.chrome_gone", pid=pid)
    stop.set()


async def serve(args: argparse.Namespace) -> None:
    guard = EgressGuard(
        allow_hosts=tuple(args.allow),
        host_map=dict(entry.split("=", 1) for entry in args.map),
    )
    port = await guard.start(args.host, args.port)
    log.info("egress.listening", host=args.host, port=port, allow=list(args.allow))
    stop = asyncio.Event()
    watcher = asyncio.create_task(_watch(args.watch_pid, stop)) if args.watch_pid else None
    try:
        await stop.wait()
    finally:
        if watcher is not None:
            watcher.cancel()
        await guard.close()


def parse_args(argv: Iterable[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m browser_core.safety._egress",
        description="SOCKS5 egress guard for the broadcast Chrome",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--allow", action="append", default=[], metavar="HOST[:PORT]")
    parser.add_argument("--map", action="append", default=[], metavar="NAME=ADDR:PORT")
    parser.add_argument("--watch-pid", type=int, default=0, help="exit when this pid exits")
    parser.add_argument("--log-format", default="json", choices=("json", "console"))
    return parser.parse_args(None if argv is None else list(argv))


def main(argv: Iterable[str] | None = None) -> int:
    from .._logging import configure_logging

    args = parse_args(argv)
    configure_logging("info", args.log_format)
    try:
        asyncio.run(serve(args))
    except OSError as exc:
        print(f"egress guard: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
