"""SOCKS5 servers the egress comparison puts a Chromium behind, one process each, bench only:

- `pass`: a plain pass-through written the way a small SOCKS5 server usually is (answer the
  greeting, read CONNECT, connect, copy both ways), none of the guard's code: no policy, no
  name cache, no early greeting, no socket tuning;
- `unchecked`: our egress guard with its policy checks off (no name, address or allow-list
  check; the same SOCKS handling, name cache and relay). The switch lives here, not in the
  guard: no setting or flag of the product can turn the checks off.

Both map names as the guard does on the bench (`--map NAME=ADDR:PORT`, `*=` for "every other
name fails as not resolved", a SOCKS host-unreachable reply). Each refusal is one line on
stderr. Run: `python -m bench.egress._socks --mode pass|unchecked --port P --map ...`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from browser_core import configure_logging, stop_pid
from browser_core.testing import (
    REP_HOST_UNREACHABLE,
    EgressGuard,
    Refused,
    is_credential_name,
    normal_host,
)
from browser_core.testing import keep_env as _keep

MODES = ("pass", "unchecked")
_OK, _FAILURE = 0, 1


class UncheckedGuard(EgressGuard):
    """The egress guard with every policy check off: mapped names go where they are mapped,
    other names are resolved (through the guard's name cache) and connected to unchecked."""

    async def decide(self, host: str, port: int) -> list[tuple[str, int]]:
        host = normal_host(host)
        mapped = self.mapped(host)
        if mapped is not None:
            return mapped
        addresses = [host] if _is_ip(host) else await self.names.resolve(host, port)
        return [(address, port) for address in addresses]


def _is_ip(host: str) -> bool:
    try:
        socket.inet_pton(socket.AF_INET6 if ":" in host else socket.AF_INET, host)
    except OSError:
        return False
    return True


class PassThrough:
    """A plain SOCKS5 pass-through (no auth, CONNECT only), with the bench's name map."""

    def __init__(self, host_map: Mapping[str, str]) -> None:
        self.host_map = dict(host_map)

    def target(self, host: str, port: int) -> tuple[str, int]:
        mapped = self.host_map.get(host.rstrip(".").lower())
        if mapped:
            address, _, mapped_port = mapped.rpartition(":")
            return address, int(mapped_port)
        if "*" in self.host_map and not _is_ip(host):
            raise Refused("name not resolved (not mapped)", REP_HOST_UNREACHABLE)
        return host, port

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream: asyncio.StreamWriter | None = None
        try:
            host, port = await _request(reader, writer)
            try:
                up_reader, upstream = await asyncio.open_connection(*self.target(host, port))
            except (Refused, OSError) as exc:
                code = exc.reply if isinstance(exc, Refused) else _FAILURE
                print(f"refused {host}:{port} {exc}", file=sys.stderr, flush=True)
                writer.write(_reply(code))
                return
            writer.write(_reply(_OK))
            await asyncio.gather(_copy(reader, upstream), _copy(up_reader, writer))
        except (OSError, asyncio.IncompleteReadError, ValueError):
            return
        finally:
            for stream in (upstream, writer):
                if stream is not None:
                    with contextlib.suppress(Exception):
                        stream.close()


async def _request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> tuple[str, int]:
    _, count = await reader.readexactly(2)
    await reader.readexactly(count)
    writer.write(b"\x05\x00")
    _, command, _, kind = await reader.readexactly(4)
    if kind == 1:
        host = socket.inet_ntop(socket.AF_INET, await reader.readexactly(4))
    elif kind == 4:
        host = socket.inet_ntop(socket.AF_INET6, await reader.readexactly(16))
    elif kind == 3:
        (size,) = await reader.readexactly(1)
        host = (await reader.readexactly(size)).decode("ascii", "replace")
    else:
        raise ValueError("unsupported address type")
    (port,) = struct.unpack("!H", await reader.readexactly(2))
    if command != 1:
        raise ValueError("only CONNECT")
    return host, port


def _reply(code: int) -> bytes:
    return bytes([5, code, 0, 1, 0, 0, 0, 0, 0, 0])


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except OSError:
        writer.close()


async def serve(mode: str, port: int, host_map: Mapping[str, str]) -> None:
    if mode == "unchecked":
        guard = UncheckedGuard(host_map=dict(host_map))
        await guard.start("127.0.0.1", port)
    else:
        server = PassThrough(host_map)
        await asyncio.start_server(server.handle, "127.0.0.1", port)
    await asyncio.Event().wait()


def start_proxy(mode: str, port: int, host_map: Mapping[str, str], log_path: Path) -> int:
    """Start `python -m bench.egress._socks` on 127.0.0.1:`port`; its pid once it listens."""
    if mode not in MODES:
        raise ValueError(f"unknown SOCKS mode {mode!r}: one of {', '.join(MODES)}")
    cmd = [sys.executable, "-m", "bench.egress._socks", "--mode", mode, "--port", str(port)]
    cmd += [f"--map={name}={target}" for name, target in host_map.items()]
    env = {k: v for k, v in os.environ.items() if not is_credential_name(k)}  # as the guard's
    env["PYTHONUNBUFFERED"] = "1"  # one log line per refusal, as it happens
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd=Path(__file__).resolve().parents[2],
            env=env,
            start_new_session=True,
        )
    _keep(proc)  # reaped by `stop_pid`, as the guard's process is
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return proc.pid
        time.sleep(0.05)
    stop_pid(proc.pid)
    raise RuntimeError(f"the {mode} SOCKS server did not start on 127.0.0.1:{port}: see {log_path}")


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.egress._socks", description=__doc__)
    parser.add_argument("--mode", choices=MODES, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--map", action="append", default=[], metavar="NAME=ADDR:PORT")
    args = parser.parse_args(None if argv is None else list(argv))
    host_map = dict(entry.split("=", 1) for entry in args.map)
    configure_logging("info", "json")  # as the guard's process: one line per refusal
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.mode, args.port, host_map))
    return 0


if __name__ == "__main__":
    sys.exit(main())
