"""The special-purpose address ranges, by this project's own table (IANA's IPv4 and IPv6
special-purpose registries, read for a public stream), so the answer is the same on every Python.

Guards against the policy changing with the interpreter: `ipaddress`'s `is_private` and
`is_global` changed between 3.11 and 3.13 (2002::/16, 192.0.0.0/24 and 2001::/23 with
exceptions, 3fff::/20, 64:ff9b:1::/48): the 6to4 form of 8.8.8.8 was public on 3.11 and a
"private network address" on 3.13. Only parsing and `in` are taken from `ipaddress` here.
"""

from __future__ import annotations

from collections.abc import Iterable
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network

LOOPBACK = "loopback address"
LINK_LOCAL = "link-local or metadata address"
PRIVATE = "private network address"
MULTICAST = "multicast address"
RESERVED = "reserved address"
INTERNAL = "internal address"

Address = IPv4Address | IPv6Address
_V4_BITS = 0xFFFFFFFF

# First match wins. The reasons are the ones the policy gave on Python 3.11.
IPV4_RANGES: tuple[tuple[IPv4Network, str], ...] = tuple(
    (IPv4Network(net), reason)
    for net, reason in (
        ("0.0.0.0/8", PRIVATE),  # "this network", 0.0.0.0 (unspecified) included
        ("10.0.0.0/8", PRIVATE),
        ("100.64.0.0/10", INTERNAL),  # carrier-grade NAT
        ("127.0.0.0/8", LOOPBACK),
        ("169.254.0.0/16", LINK_LOCAL),  # cloud metadata at 169.254.169.254
        ("172.16.0.0/12", PRIVATE),
        # IETF protocol assignments. IANA calls 192.0.0.9 (PCP anycast) and 192.0.0.10 (TURN
        # anycast) globally reachable; the server behind them is the local network's own.
        ("192.0.0.0/24", PRIVATE),
        ("192.0.2.0/24", PRIVATE),  # documentation (TEST-NET-1)
        ("192.88.99.0/24", RESERVED),  # 6to4 relay anycast, deprecated (RFC 7526)
        ("192.168.0.0/16", PRIVATE),
        ("198.18.0.0/15", PRIVATE),  # benchmarking
        ("198.51.100.0/24", PRIVATE),  # documentation (TEST-NET-2)
        ("203.0.113.0/24", PRIVATE),  # documentation (TEST-NET-3)
        ("224.0.0.0/4", MULTICAST),
        ("240.0.0.0/4", PRIVATE),  # reserved, 255.255.255.255 (limited broadcast) included
    )
)

IPV4_MAPPED = IPv6Network("::ffff:0:0/96")  # judged as the IPv4 address it carries
SIXTOFOUR = IPv6Network("2002::/16")  # 6to4: 2002:AABB:CCDD::/48 carries AA.BB.CC.DD
NAT64 = IPv6Network("64:ff9b::/96")  # the well-known NAT64 prefix: the last 32 bits
TEREDO = IPv6Network("2001::/32")  # refused whole, with the reason of the IPv4 it carries
GLOBAL_UNICAST = IPv6Network("2000::/3")  # IANA allocates nothing public outside it

IPV6_RANGES: tuple[tuple[IPv6Network, str], ...] = tuple(
    (IPv6Network(net), reason)
    for net, reason in (
        ("::1/128", LOOPBACK),
        ("::/128", PRIVATE),  # unspecified
        ("64:ff9b:1::/48", PRIVATE),  # local-use IPv4/IPv6 translation (RFC 8215)
        ("100::/64", PRIVATE),  # discard-only
        # IETF protocol assignments, Teredo included. IANA calls a few globally reachable
        # (2001:1::1 PCP and 2001:1::2 TURN anycast, 2001:3::/32 AMT, 2001:4:112::/48 AS112,
        # 2001:20::/28 and 2001:30::/28 ORCHIDv2): anycast the local network answers, or
        # identifiers; no page to show. Refused whole, as 3.11 did.
        ("2001::/23", PRIVATE),
        ("2001:db8::/32", PRIVATE),  # documentation
        ("3fff::/20", PRIVATE),  # documentation (RFC 9637, 2024)
        ("5f00::/16", RESERVED),  # SRv6 segment identifiers (RFC 9602, 2024)
        ("fc00::/7", PRIVATE),  # unique local (AWS's metadata at fd00:ec2::254)
        ("fe80::/10", LINK_LOCAL),
        ("fec0::/10", INTERNAL),  # site-local (deprecated; internal wherever still used)
        ("ff00::/8", MULTICAST),
    )
)


def range_reason(addr: Address) -> str | None:
    """Why `addr` is not a public address, by the tables above, or None if it is public."""
    if isinstance(addr, IPv4Address):
        return _first(addr, IPV4_RANGES)
    if addr in IPV4_MAPPED:
        return _first(_v4(addr, 0), IPV4_RANGES)
    if addr in SIXTOFOUR:
        return _tagged(_v4(addr, 80), "6to4")
    if addr in NAT64:
        return _tagged(_v4(addr, 0), "NAT64")
    if addr in TEREDO:  # refused whole; the reason names the client (stored inverted) or server
        server, client = _v4(addr, 64), IPv4Address(~int(addr) & _V4_BITS)
        return _tagged(client, "Teredo") or _tagged(server, "Teredo") or PRIVATE
    reason = _first(addr, IPV6_RANGES)
    if reason is None and addr not in GLOBAL_UNICAST:
        return RESERVED
    return reason


def _first(addr: Address, table: Iterable[tuple[IPv4Network | IPv6Network, str]]) -> str | None:
    return next((reason for net, reason in table if addr in net), None)


def _v4(addr: IPv6Address, shift: int) -> IPv4Address:
    """The IPv4 address in the 32 bits of `addr` that end `shift` bits before its last bit."""
    return IPv4Address((int(addr) >> shift) & _V4_BITS)


def _tagged(v4: IPv4Address, form: str) -> str | None:
    reason = _first(v4, IPV4_RANGES)
    return f"{reason} ({form})" if reason else None
