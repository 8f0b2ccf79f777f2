"""Binding the listening socket before start (port 0, Unix sockets) and refusing an exposed
address without an explicit token."""

from __future__ import annotations

import contextlib
import errno
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from browser_core import (
    Settings,
)

from ._access import allowed_hosts, is_loopback


@dataclass(frozen=True)
class Bound:
    """A listening socket and how clients reach it."""

    sock: socket.socket
    url: str
    hosts: frozenset[str] | None


class StartRefused(Exception):
    """Settings the service will not start with; the message says how to fix them."""


def check_exposure(settings: Settings) -> None:
    if settings.service_socket or is_loopback(settings.service_host):
        return
    if settings.service_token is None:
        raise StartRefused(
            f"refusing to listen on {settings.service_host} (not a loopback address) without "
            "an explicit token: set SB_SERVICE_TOKEN to a long random secret that the "
            "clients also get, or bind to 127.0.0.1"
        )


def bind(settings: Settings) -> Bound:
    """Bind before starting, so port 0 works and the `Host` check knows the real port."""
    if settings.service_socket:
        path = Path(settings.service_socket).expanduser()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            sock.bind(str(path))
            os.chmod(path, 0o600)  # only this user may connect
        except OSError as exc:
            sock.close()
            raise StartRefused(
                f"cannot listen on the Unix socket {path} ({exc.strerror or exc}): set "
                "SB_SERVICE_SOCKET (or --socket) to a short path in a folder this user can write"
            ) from None
        sock.listen(128)
        return Bound(sock, f"unix://{path}", None)
    host = settings.service_host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, settings.service_port))
    except OSError as exc:
        sock.close()
        in_use = exc.errno == errno.EADDRINUSE
        fix = (
            "another service may be running "
            f"(`curl http://{host}:{settings.service_port}/healthz`); set SB_SERVICE_PORT "
            "(or --port) to a free port"
            if in_use
            else "set SB_SERVICE_HOST (or --host) to an address of this machine, such as 127.0.0.1"
        )
        raise StartRefused(
            f"cannot listen on {host}:{settings.service_port} ({exc.strerror or exc}): {fix}"
        ) from None
    sock.listen(128)
    port = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    return Bound(sock, f"http://{shown}:{port}", allowed_hosts(host, port))
