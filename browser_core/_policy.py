"""Which URLs may be opened on the broadcast screen.

A URL typed by a stranger must not show local files or internal services on a public
stream: only http(s) is allowed, and hosts on loopback, private, link-local, CGNAT,
multicast and cloud-metadata ranges are refused (also when a name resolves to them),
unless the allow-list (`SB_ALLOW_HOSTS`, entries `host` or `host:port`) names them.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from ._errors import BlockedUrl

ALLOWED_SCHEMES = ("http", "https")
_BLOCKED_NAMES = (
    "localhost",
    "localhost.localdomain",
    "metadata.google.internal",
    "metadata",
    "instance-data",
)
_BLOCKED_SUFFIXES = (".localhost", ".local", ".internal", ".lan", ".home.arpa")
_EXTRA_NETS = tuple(
    ipaddress.ip_network(n)
    for n in (
        "100.64.0.0/10",  # carrier-grade NAT
        "192.0.0.0/24",  # IETF protocol assignments
        "198.18.0.0/15",  # benchmarking
        "fd00:ec2::254/128",  # AWS metadata (IPv6)
    )
)

Resolver = Callable[[str], Iterable[str]]

# Requests a page makes to internal addresses by number or well-known name (frames, images,
# scripts, XHR): matched in Playwright's driver, so other requests never reach Python.
INTERNAL_REQUEST = re.compile(
    r"^(?:https?|wss?)://(?:[^/@]*@)?(?:"
    r"localhost|[^/:?#]*\.(?:localhost|local|internal|lan|home\.arpa)"
    r"|127(?:\.\d+){3}|10(?:\.\d+){3}|192\.168(?:\.\d+){2}|172\.(?:1[6-9]|2\d|3[01])(?:\.\d+){2}"
    r"|169\.254(?:\.\d+){2}|100\.(?:6[4-9]|[7-9]\d|1[01]\d|12[0-7])(?:\.\d+){2}"
    r"|0\.0\.0\.0|0x[0-9a-f.x]+|\d+|\[[^\]]*\]"
    r")\.?(?::\d+)?(?:[/?#]|$)",
    re.IGNORECASE,
)


def _resolve(host: str) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return [str(info[4][0]) for info in infos]


def _address_reason(addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped:
        return _address_reason(addr.ipv4_mapped)
    checks = (
        (addr.is_loopback, "loopback address"),
        (addr.is_link_local, "link-local or metadata address"),
        (addr.is_private, "private network address"),
        (addr.is_multicast, "multicast address"),
        (addr.is_unspecified, "unspecified address"),
        (addr.is_reserved, "reserved address"),
        (any(addr in net for net in _EXTRA_NETS), "internal address"),
    )
    return next((reason for hit, reason in checks if hit), None)


def _parse_ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    # Browsers also accept decimal, hex and short forms such as 2130706433 or 0x7f.1.
    try:
        packed = socket.inet_aton(host)
    except (OSError, UnicodeError):
        return None
    return ipaddress.IPv4Address(packed)


def _allowed(host: str, port: int | None, allow: Iterable[str]) -> bool:
    for entry in allow:
        entry = entry.strip().lower()
        if not entry:
            continue
        if entry.startswith("[") or entry.count(":") != 1:
            name, entry_port = entry.strip("[]"), None
        else:
            name, _, raw_port = entry.partition(":")
            entry_port = int(raw_port) if raw_port.isdigit() else None
        if name == host and (entry_port is None or entry_port == port):
            return True
    return False


def check_url(
    url: str,
    allow_hosts: Iterable[str] = (),
    *,
    resolver: Resolver | None = _resolve,
) -> str:
    """Return the normalised URL if it may be opened, else raise `BlockedUrl` with the reason."""
    raw = url.strip()
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError as exc:
        raise BlockedUrl(f"not a valid URL: {raw[:200]!r}", url=raw, reason="invalid") from exc
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise BlockedUrl(
            f"refused to open a {scheme or 'scheme-less'}: URL on the broadcast screen",
            hint="only http and https pages can be opened",
            url=raw[:200],
            reason="scheme",
        )
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise BlockedUrl("URL has no host", url=raw[:200], reason="invalid")
    try:
        host = host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError as exc:
        raise BlockedUrl(
            f"invalid international host name {host!r}", url=raw[:200], reason="invalid"
        ) from exc
    if _allowed(host, port or (443 if scheme == "https" else 80), allow_hosts):
        return raw
    reason = _host_reason(host, resolver)
    if reason:
        raise BlockedUrl(
            f"refused to open {host}: {reason}",
            hint="internal addresses are never shown on the stream; add the host to "
            "SB_ALLOW_HOSTS if this is intended",
            url=raw[:200],
            reason=reason,
        )
    return raw


def _host_reason(host: str, resolver: Resolver | None) -> str | None:
    if host in _BLOCKED_NAMES or host.endswith(_BLOCKED_SUFFIXES):
        return "internal host name"
    addr = _parse_ip(host)
    if addr is not None:
        return _address_reason(addr)
    if resolver is None:
        return None
    for resolved in resolver(host):
        addr = _parse_ip(resolved.split("%", 1)[0])
        reason = _address_reason(addr) if addr else None
        if reason:
            return f"{reason} (resolved from the name)"
    return None


def is_allowed(
    url: str, allow_hosts: Iterable[str] = (), *, resolver: Resolver | None = None
) -> bool:
    """Cheap yes/no without DNS (used for redirect hops and popups)."""
    try:
        check_url(url, allow_hosts, resolver=resolver)
    except BlockedUrl:
        return False
    return True
