"""The project's own table of special-purpose address ranges (`browser_core.safety._ranges`):
each range pinned by its first and last address and the addresses just outside it, the
forms that carry an IPv4 address (mapped, 6to4, NAT64, Teredo), and proof that the answer
never comes from the running Python's `ipaddress` classification (which changed in 3.13)."""

from __future__ import annotations

import ipaddress

import pytest

from browser_core import BlockedUrl, check_url
from browser_core.safety._policy import address_reason

LOOP = "loopback address"
LINK = "link-local or metadata address"
PRIV = "private network address"
MULTI = "multicast address"
RES = "reserved address"
INT = "internal address"
F = "ffff:ffff:ffff:ffff:ffff:ffff"  # the low 96 bits set, for the last address of a /32

IPV4 = [
    ("0.0.0.0", PRIV),  # "this network", the unspecified address included
    ("0.255.255.255", PRIV),
    ("1.0.0.0", None),
    ("9.255.255.255", None),
    ("10.0.0.0", PRIV),
    ("10.255.255.255", PRIV),
    ("11.0.0.0", None),
    ("100.63.255.255", None),
    ("100.64.0.0", INT),  # carrier-grade NAT
    ("100.127.255.255", INT),
    ("100.128.0.0", None),
    ("126.255.255.255", None),
    ("127.0.0.0", LOOP),
    ("127.255.255.255", LOOP),
    ("128.0.0.0", None),
    ("169.253.255.255", None),
    ("169.254.0.0", LINK),
    ("169.254.169.254", LINK),  # cloud metadata
    ("169.254.255.255", LINK),
    ("169.255.0.0", None),
    ("172.15.255.255", None),
    ("172.16.0.0", PRIV),
    ("172.31.255.255", PRIV),
    ("172.32.0.0", None),
    ("191.255.255.255", None),
    ("192.0.0.0", PRIV),  # IETF protocol assignments, the whole /24 on every Python
    ("192.0.0.8", PRIV),
    ("192.0.0.9", PRIV),  # PCP anycast: globally reachable for IANA and Python 3.13
    ("192.0.0.10", PRIV),  # TURN anycast: likewise
    ("192.0.0.171", PRIV),
    ("192.0.0.255", PRIV),
    ("192.0.1.0", None),
    ("192.0.1.255", None),
    ("192.0.2.0", PRIV),  # documentation
    ("192.0.2.255", PRIV),
    ("192.0.3.0", None),
    ("192.88.98.255", None),
    ("192.88.99.0", RES),  # 6to4 relay anycast, deprecated
    ("192.88.99.255", RES),
    ("192.88.100.0", None),
    ("192.167.255.255", None),
    ("192.168.0.0", PRIV),
    ("192.168.255.255", PRIV),
    ("192.169.0.0", None),
    ("198.17.255.255", None),
    ("198.18.0.0", PRIV),  # benchmarking
    ("198.19.255.255", PRIV),
    ("198.20.0.0", None),
    ("198.51.99.255", None),
    ("198.51.100.0", PRIV),  # documentation
    ("198.51.100.255", PRIV),
    ("198.51.101.0", None),
    ("203.0.112.255", None),
    ("203.0.113.0", PRIV),  # documentation
    ("203.0.113.255", PRIV),
    ("203.0.114.0", None),
    ("223.255.255.255", None),
    ("224.0.0.0", MULTI),
    ("239.255.255.255", MULTI),
    ("240.0.0.0", PRIV),  # reserved
    ("255.255.255.255", PRIV),  # limited broadcast
    ("8.8.8.8", None),
]

IPV6 = [
    ("::", PRIV),  # unspecified
    ("::1", LOOP),
    ("::2", RES),
    ("::7f00:1", RES),  # IPv4-compatible (deprecated): not judged by what it carries
    ("ff:" + F + ":ffff", RES),  # the end of ::/8
    ("100::", PRIV),  # discard-only
    ("100::ffff:ffff:ffff:ffff", PRIV),
    ("100:0:0:1::", RES),
    ("1fff:" + F + ":ffff", RES),  # the end of ::/3: nothing public before 2000::/3
    ("2000::", None),
    ("2000:" + F + ":ffff", None),
    ("2001::1", f"{PRIV} (Teredo)"),  # Teredo, refused whole (below): server 0.0.0.0
    ("2001:1::1", PRIV),  # PCP anycast: globally reachable for IANA and Python 3.13
    ("2001:1::2", PRIV),  # TURN anycast: likewise
    ("2001:2::1", PRIV),  # benchmarking
    ("2001:3::1", PRIV),  # AMT: globally reachable for IANA and Python 3.13
    ("2001:4:112::1", PRIV),  # AS112-v6: likewise
    ("2001:10::1", PRIV),  # ORCHID (deprecated)
    ("2001:20::1", PRIV),  # ORCHIDv2: globally reachable for IANA and Python 3.13
    ("2001:30::1", PRIV),  # drone remote ID (ORCHIDv2): likewise
    ("2001:1ff:" + F, PRIV),  # the end of 2001::/23
    ("2001:200::", None),
    ("2001:db7:" + F, None),
    ("2001:db8::", PRIV),  # documentation
    ("2001:db8:" + F, PRIV),
    ("2001:db9::", None),
    ("2001:" + F + ":ffff", None),
    ("2003::", None),
    ("3ffe:" + F + ":ffff", None),
    ("3fff::", PRIV),  # documentation (RFC 9637, 2024): public on 3.11, private on 3.13
    ("3fff:fff:" + F, PRIV),
    ("3fff:1000::", None),
    ("3fff:" + F + ":ffff", None),  # the end of 2000::/3
    ("4000::", RES),
    ("5eff:" + F + ":ffff", RES),
    ("5f00::", RES),  # SRv6 segment identifiers (RFC 9602, 2024)
    ("5f00:" + F + ":ffff", RES),
    ("5f01::", RES),
    ("fbff:" + F + ":ffff", RES),
    ("fc00::", PRIV),  # unique local
    ("fd00:ec2::254", PRIV),  # AWS metadata
    ("fdff:" + F + ":ffff", PRIV),
    ("fe00::", RES),
    ("fe7f:" + F + ":ffff", RES),
    ("fe80::", LINK),
    ("febf:" + F + ":ffff", LINK),
    ("fec0::", INT),  # site-local (deprecated)
    ("fec0:0:0:ffff::1", INT),  # the old site-local DNS resolver address
    ("feff:" + F + ":ffff", INT),
    ("ff00::", MULTI),
    ("ff02::1", MULTI),
    ("ffff:" + F + ":ffff", MULTI),
    ("2606:4700::1111", None),
    ("2a00:1450::1", None),
]

# Forms that carry an IPv4 address, and the addresses just outside their prefixes.
CARRIERS = [
    ("::ffff:127.0.0.1", LOOP),  # IPv4-mapped: judged as the IPv4 address, untagged
    ("::ffff:10.0.0.1", PRIV),
    ("::ffff:169.254.169.254", LINK),
    ("::ffff:8.8.8.8", None),
    ("::fffe:ffff:ffff", RES),
    ("::1:0:0:0", RES),
    ("2002:7f00:1::1", f"{LOOP} (6to4)"),  # 6to4: 2002:AABB:CCDD::/48 carries AA.BB.CC.DD
    ("2002:a00:1::1", f"{PRIV} (6to4)"),
    ("2002:a9fe:a9fe::1", f"{LINK} (6to4)"),
    ("2002:c000:209::", f"{PRIV} (6to4)"),  # 192.0.2.9
    ("2002:6440:1::", f"{INT} (6to4)"),  # 100.64.0.1
    ("2002:808:808::1", None),  # 8.8.8.8: 3.13's ipaddress says private
    ("2002:" + F + ":ffff", f"{PRIV} (6to4)"),  # 255.255.255.255
    ("2002:808:808:" + F[:-5], None),  # the last of 8.8.8.8's /48
    ("64:ff9b::7f00:1", f"{LOOP} (NAT64)"),  # NAT64: the last 32 bits
    ("64:ff9b::a00:1", f"{PRIV} (NAT64)"),
    ("64:ff9b::a9fe:a9fe", f"{LINK} (NAT64)"),
    ("64:ff9b::e000:1", f"{MULTI} (NAT64)"),
    ("64:ff9b::808:808", None),
    ("64:ff9b::", f"{PRIV} (NAT64)"),  # 0.0.0.0
    ("64:ff9b::ffff:ffff", f"{PRIV} (NAT64)"),  # 255.255.255.255
    ("64:ff9a:" + F, RES),
    ("64:ff9b::1:0:0", RES),
    ("64:ff9b:0:ffff:ffff:ffff:ffff:ffff", RES),
    ("64:ff9b:1::", PRIV),  # local-use translation (RFC 8215): 3.11 reserved, 3.13 private
    ("64:ff9b:1:ffff:ffff:ffff:ffff:ffff", PRIV),
    ("64:ff9b:2::", RES),
    # Teredo 2001:0:SERVER:FLAGS:PORT:CLIENT (the client inverted): refused whole, the reason
    # naming an internal client or server; 65.54.227.120 is a public server, f7f7:f7f7 is
    # 8.8.8.8 inverted, 80ff:fffe is 127.0.0.1 inverted.
    ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", PRIV),
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", f"{LOOP} (Teredo)"),
    ("2001:0:a00:1:8000:63bf:f7f7:f7f7", f"{PRIV} (Teredo)"),
    ("2001:0:" + F, f"{PRIV} (Teredo)"),  # server 255.255.255.255, client 0.0.0.0
    ("2001:1::", PRIV),  # just after Teredo: the rest of 2001::/23
]


@pytest.mark.parametrize(("address", "reason"), IPV4 + IPV6 + CARRIERS)
def test_each_range_is_pinned_at_its_edges(address: str, reason: str | None) -> None:
    assert address_reason(address) == reason


@pytest.mark.parametrize(
    "name",
    [
        "is_private",
        "is_global",
        "is_reserved",
        "is_loopback",
        "is_link_local",
        "is_multicast",
        "is_unspecified",
        "is_site_local",
        "ipv4_mapped",
        "sixtofour",
        "teredo",
    ],
)
def test_the_answer_never_comes_from_the_pythons_own_classification(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """What `ipaddress` says of a range changed between 3.11 and 3.13: the policy must not
    ask it (each of these raises here), so the answer is the table's on every Python."""

    def asked(self: object) -> bool:
        raise AssertionError(f"the policy asked ipaddress for {name}")

    for cls in (ipaddress.IPv4Address, ipaddress.IPv6Address):
        if hasattr(cls, name):
            monkeypatch.setattr(cls, name, property(asked))
    for address, reason in IPV4 + IPV6 + CARRIERS:
        assert address_reason(address) == reason, address


def test_a_nat64_address_opens_when_it_carries_a_public_ipv4_address() -> None:
    """On an IPv6-only network a DNS64 resolver answers 64:ff9b::a.b.c.d for IPv4-only sites:
    those open, and the NAT64 forms of internal addresses are refused as the address."""
    assert check_url("http://[64:ff9b::808:808]/", resolver=lambda host: [])
    with pytest.raises(BlockedUrl) as info:
        check_url("http://[64:ff9b::a9fe:a9fe]/latest/", resolver=lambda host: [])
    assert "link-local or metadata address (NAT64)" in str(info.value)
    with pytest.raises(BlockedUrl, match=r"loopback address \(NAT64\) \(resolved from the name\)"):
        check_url("http://dns64.example/", resolver=lambda host: ["64:ff9b::7f00:1"])
