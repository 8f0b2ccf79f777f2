"""Which URLs may be opened on the broadcast screen.

A URL typed by a stranger must not show local files or internal services on a public
stream: only http(s) is allowed, and hosts on loopback, private, link-local, CGNAT,
multicast and cloud-metadata ranges are refused (also when a name resolves to them),
unless the allow-list (`SB_ALLOW_HOSTS`, entries `host` or `host:port`) names them. Which
ranges those are is the project's own table (`_ranges`), not the running Python's `ipaddress`.

URLs are parsed with a WHATWG URL Standard parser (`ada_url`, Chrome's reading of a URL)
before any decision, so `http://%76m/`, `http://vm\\@example.com/`, `127.0.0.1%2e` and
`0x7f000001` are the same host to us as to Chrome. The egress guard (`_egress`) reuses the
address rules here after it has resolved a name.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import ada_url

from .._errors import BlockedUrl
from ._ranges import range_reason

ALLOWED_SCHEMES = ("http", "https")
_BLOCKED_NAMES = (
    "localhost",
    "localhost.localdomain",
    "metadata.google.internal",
    "metadata",
    "instance-data",
)
_BLOCKED_SUFFIXES = (".localhost", ".local", ".internal", ".lan", ".home.arpa")

Resolver = Callable[[str], Iterable[str]]

# Requests a page makes to internal addresses by number or well-known name (frames, images,
# scripts, XHR): matched in Playwright's driver, so other requests never reach Python.
_INTERNAL_HOST = (
    r"localhost|[^/:?#]*\.(?:localhost|local|internal|lan|home\.arpa)"
    r"|127(?:\.\d+){3}|10(?:\.\d+){3}|192\.168(?:\.\d+){2}|172\.(?:1[6-9]|2\d|3[01])(?:\.\d+){2}"
    r"|169\.254(?:\.\d+){2}|100\.(?:6[4-9]|[7-9]\d|1[01]\d|12[0-7])(?:\.\d+){2}"
    r"|0\.0\.0\.0|0x[0-9a-f.x]+|\d+|\[[^\]]*\]"
)
_SCHEME = r"^(?:https?|wss?)://(?:[^/@]*@)?"
INTERNAL_REQUEST = re.compile(
    _SCHEME + f"(?:{_INTERNAL_HOST})" + r"\.?(?::\d+)?(?:[/?#]|$)", re.IGNORECASE
)


def internal_request(allow_hosts: Iterable[str] = ()) -> re.Pattern[str]:
    """`INTERNAL_REQUEST` less the hosts `SB_ALLOW_HOSTS` allows (`host` or `host:port`):
    an allowed local service is not routed through Python at all (Playwright keeps every
    request a route sees alive until the connection drops)."""
    allowed = [
        re.escape(host) + ("" if ":" in host.strip("[]") and "]" not in host else r"(?::\d+)?")
        for host in (h.strip().lower() for h in allow_hosts)
        if host
    ]
    if not allowed:
        return INTERNAL_REQUEST
    skip = _SCHEME + f"(?:{'|'.join(allowed)})" + r"(?:[/?#]|$)"
    return re.compile(f"(?!{skip})" + INTERNAL_REQUEST.pattern, re.IGNORECASE)


def _resolve(host: str) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return [str(info[4][0]) for info in infos]


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


def host_allowed(host: str, port: int | None, allow: Iterable[str]) -> bool:
    """True if an `SB_ALLOW_HOSTS` entry (`host` or `host:port`) names this host and port."""
    host = host.strip("[]").rstrip(".").lower()
    for entry in allow:
        entry = entry.strip().lower()
        if not entry:
            continue
        name, entry_port = _split_entry(entry)
        if name == host and (entry_port is None or entry_port == port):
            return True
    return False


def _split_entry(entry: str) -> tuple[str, int | None]:
    """`host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 address -> (host, port)."""
    if entry.startswith("["):
        name, _, rest = entry[1:].partition("]")
        raw_port = rest[1:] if rest.startswith(":") else ""
    elif entry.count(":") == 1:
        name, _, raw_port = entry.partition(":")
    else:
        name, raw_port = entry, ""
    return name.rstrip("."), int(raw_port) if raw_port.isdigit() else None


@dataclass(frozen=True)
class CanonicalUrl:
    """A URL as Chrome reads it: canonical `href`, scheme, host (no brackets, no final dot)."""

    href: str
    scheme: str
    host: str
    port: int


def canonical_url(url: str) -> CanonicalUrl:
    """Parse `url` the WHATWG way (as Chrome does); raise `BlockedUrl` if it is not a URL."""
    raw = url.strip()
    try:
        parts = ada_url.parse_url(raw)
    except ValueError as exc:
        raise BlockedUrl(
            f"not a valid URL: {raw[:200]!r}", url=raw[:200], reason="invalid"
        ) from exc
    scheme = str(parts["protocol"]).rstrip(":").lower()
    host = str(parts["hostname"]).strip("[]").rstrip(".").lower()
    port = str(parts["port"])
    default = {"https": 443, "wss": 443}.get(scheme, 80)
    return CanonicalUrl(str(parts["href"]), scheme, host, int(port) if port else default)


def check_url(
    url: str,
    allow_hosts: Iterable[str] = (),
    *,
    resolver: Resolver | None = _resolve,
) -> str:
    """Return the canonical URL if it may be opened, else raise `BlockedUrl` with the reason.

    The decision is taken on the canonical host (percent-decoded, IDNA, numeric IPv4 forms
    normalised, trailing dot dropped), and the canonical `href` is what should be opened.
    """
    parsed = canonical_url(url)
    if parsed.scheme not in ALLOWED_SCHEMES:
        raise BlockedUrl(
            f"refused to open a {parsed.scheme or 'scheme-less'}: URL on the broadcast screen",
            hint="only http and https pages can be opened",
            url=parsed.href[:200],
            reason="scheme",
        )
    if not parsed.host:
        raise BlockedUrl("URL has no host", url=parsed.href[:200], reason="invalid")
    if host_allowed(parsed.host, parsed.port, allow_hosts):
        return parsed.href
    reason = _host_reason(parsed.host, resolver)
    if reason:
        raise BlockedUrl(
            f"refused to open {parsed.host}: {reason}",
            hint="internal addresses are never shown on the stream; add the host to "
            "SB_ALLOW_HOSTS if this is intended",
            url=parsed.href[:200],
            reason=reason,
        )
    return parsed.href


def name_reason(host: str) -> str | None:
    """Why `host` (a name or an address literal) is internal without any DNS, or None."""
    return _host_reason(host.strip("[]").rstrip(".").lower(), None)


def address_reason(address: str) -> str | None:
    """Why a resolved address (`127.0.0.1`, `fe80::1%eth0`) is internal, or None."""
    addr = _parse_ip(address.split("%", 1)[0])
    return range_reason(addr) if addr is not None else "not an IP address"


def _host_reason(host: str, resolver: Resolver | None) -> str | None:
    if host in _BLOCKED_NAMES or host.endswith(_BLOCKED_SUFFIXES):
        return "internal host name"
    addr = _parse_ip(host)
    if addr is not None:
        return range_reason(addr)
    if resolver is None:
        return None
    for resolved in resolver(host):
        addr = _parse_ip(resolved.split("%", 1)[0])
        reason = range_reason(addr) if addr else None
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
