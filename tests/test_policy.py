"""The navigation policy: what may be shown on a public stream."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from browser_core import BlockedUrl, check_url
from browser_core.safety._policy import (
    INTERNAL_REQUEST,
    address_reason,
    host_allowed,
    internal_request,
    name_reason,
)


def no_dns(host: str) -> list[str]:
    return []


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "FILE:///C:/Windows",
        "chrome://settings",
        "chrome-extension://x/y",
        "javascript:alert(1)",
        "data:text/html,<h1>x",
        "about:config",
        "view-source:http://a.com",
        "ftp://example.com/",
        "ws://example.com/",
    ],
)
def test_only_http_and_https_are_opened(url: str) -> None:
    with pytest.raises(BlockedUrl, match="only http and https"):
        check_url(url, resolver=no_dns)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9222/json",
        "http://localhost:8080/",
        "http://LOCALHOST/",
        "http://foo.localhost/",
        "http://[::1]/",
        "http://0.0.0.0/",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://10.0.0.5/",
        "http://172.16.3.4/",
        "http://192.168.1.1/admin",
        "http://169.254.169.254/latest/meta-data/",
        "http://metadata.google.internal/",
        "http://100.64.0.1/",
        "http://[fe80::1]/",
        "http://[fd00::1]/",
        "http://[::ffff:127.0.0.1]/",
        "https://printer.local/",
        "http://router.lan/",
    ],
)
def test_internal_addresses_are_refused(url: str) -> None:
    with pytest.raises(BlockedUrl) as info:
        check_url(url, resolver=no_dns)
    assert info.value.kind == "blocked-url"
    assert "SB_ALLOW_HOSTS" in str(info.value)


def test_a_public_name_resolving_to_an_internal_address_is_refused() -> None:
    with pytest.raises(BlockedUrl, match="resolved from the name"):
        check_url("http://sneaky.example/", resolver=lambda host: ["127.0.0.1"])


@pytest.mark.parametrize(
    "url",
    [
        "https://www.google.com/search?q=x",
        "http://example.com/a?b=c#d",
        "https://93.184.216.34/",
        "https://xn--bcher-kva.example/",
        "https://bücher.example/",
        "https://[2606:4700::1111]/",
    ],
)
def test_public_addresses_are_opened(url: str) -> None:
    # The canonical (WHATWG) form is what gets opened: IDN hosts come back in punycode.
    assert check_url(url, resolver=no_dns) == url.replace("bücher", "xn--bcher-kva")


def test_the_allow_list_opens_exceptions_by_host_and_port() -> None:
    assert check_url("http://127.0.0.1:8000/x", ["127.0.0.1"], resolver=no_dns)
    assert check_url("http://127.0.0.1:8000/x", ["127.0.0.1:8000"], resolver=no_dns)
    with pytest.raises(BlockedUrl):
        check_url("http://127.0.0.1:9222/json", ["127.0.0.1:8000"], resolver=no_dns)
    with pytest.raises(BlockedUrl):  # the allow-list never opens other schemes
        check_url("file:///etc/passwd", ["127.0.0.1"], resolver=no_dns)


@pytest.mark.parametrize(
    "url", ["", "   ", "http://", "http://[::1", "not a url", "https://a:99999/"]
)
def test_malformed_urls_are_refused_with_a_reason(url: str) -> None:
    with pytest.raises(BlockedUrl):
        check_url(url, resolver=no_dns)


# -- parser differentials: we must read a URL exactly as Chrome does (WHATWG) ----------------


def vm_resolver(seen: list[str]) -> Callable[[str], list[str]]:
    """`vm` is a hosts-file name for loopback here; record which names were looked up."""

    def resolve(host: str) -> list[str]:
        seen.append(host)
        return ["127.0.0.1"] if host == "vm" else []

    return resolve


@pytest.mark.parametrize(
    "url",
    [
        "http://%76m:8765/",  # percent-encoded name
        "http://vm:8765\\@example.com/",  # backslash is a path separator for http
        "http://VM.:8765/",  # case and trailing dot
        "http://v\tm:8765/",  # tabs and newlines are dropped inside a URL
        "http://v\nm:8765/",
    ],
)
def test_names_are_read_as_chrome_reads_them(url: str) -> None:
    seen: list[str] = []
    with pytest.raises(BlockedUrl, match="resolved from the name"):
        check_url(url, resolver=vm_resolver(seen))
    assert seen == ["vm"]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1%2e/",
        "http://127.0.0.1:8765\\@example.com/",
        "http://0x7f000001/",
        "http://127.1/",
        "http://0177.0.0.1/",
        "http://127.0.0.1./",
        "http://%31%32%37.0.0.1/",
        "http://localhost./",
        "http://LocalHost:80/",
        "http://[::ffff:7f00:1]/",
        "http://[0:0:0:0:0:0:0:1]/",
    ],
)
def test_numeric_and_encoded_loopback_forms_are_refused(url: str) -> None:
    seen: list[str] = []
    with pytest.raises(BlockedUrl):
        check_url(url, resolver=vm_resolver(seen))
    assert seen == []  # decided on the canonical host, without DNS


def test_the_canonical_url_is_what_gets_opened() -> None:
    allow = ["vm:8765"]
    assert check_url("http://vm:8765\\@example.com/", allow, resolver=no_dns) == (
        "http://vm:8765/@example.com/"
    )
    assert check_url("http://%76m:8765/x", allow, resolver=no_dns) == "http://vm:8765/x"
    # The allow-list matches the canonical host and port too.
    assert check_url("http://0x7f000001:8000/", ["127.0.0.1:8000"], resolver=no_dns) == (
        "http://127.0.0.1:8000/"
    )
    assert check_url("http://[::1]:9/", ["[::1]:9"], resolver=no_dns) == "http://[::1]:9/"
    with pytest.raises(BlockedUrl):
        check_url("http://[::1]:10/", ["[::1]:9"], resolver=no_dns)


# -- what a refusal says, and the allow-list's edges (each killed a surviving mutant) --------

HINT = (
    "(internal addresses are never shown on the stream; add the host to SB_ALLOW_HOSTS if "
    "this is intended)"
)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1/", "127.0.0.1: loopback address"),
        ("http://169.254.169.254/latest/", "169.254.169.254: link-local or metadata address"),
        ("http://10.0.0.5/", "10.0.0.5: private network address"),
        ("http://224.0.0.1/", "224.0.0.1: multicast address"),
        ("http://100.64.0.1/", "100.64.0.1: internal address"),
        ("https://printer.local/", "printer.local: internal host name"),
        ("http://[2002:7f00:1::1]/", "2002:7f00:1::1: loopback address (6to4)"),
        ("http://[2002:a9fe:a9fe::1]/", "2002:a9fe:a9fe::1: link-local or metadata address (6to4)"),
    ],
)
def test_a_refusal_says_in_words_why_and_how_to_allow_it(url: str, why: str) -> None:
    with pytest.raises(BlockedUrl) as info:
        check_url(url, resolver=no_dns)
    assert str(info.value) == f"refused to open {why} {HINT}"


def test_a_refused_scheme_and_a_broken_url_say_what_they_are() -> None:
    with pytest.raises(BlockedUrl) as info:
        check_url("file:///etc/passwd", resolver=no_dns)
    assert str(info.value) == (
        "refused to open a file: URL on the broadcast screen (only http and https pages can be "
        "opened)"
    )
    with pytest.raises(BlockedUrl) as info:
        check_url("http://exa mple.com/", resolver=no_dns)
    assert str(info.value) == "not a valid URL: 'http://exa mple.com/'"


def test_6to4_of_a_public_address_is_public_and_of_an_internal_one_is_not() -> None:
    assert address_reason("2002:808:808::1") is None  # 8.8.8.8
    assert address_reason("2002:a00:1::1") == "private network address (6to4)"  # 10.0.0.1
    assert check_url("http://[2002:808:808::1]/", resolver=no_dns)


def test_the_guard_reads_every_ipv4_spelling_it_may_be_sent() -> None:
    for spelling in ("127.0.0.1", "2130706433", "0x7f.1", "127.1", "0177.0.0.1"):
        assert name_reason(spelling) == "loopback address", spelling


def test_allow_list_entries_are_read_whatever_their_case_dots_or_gaps() -> None:
    url = "http://intranet.local:8443/x"
    for entries in (
        ["Intranet.LOCAL:8443"],  # any case
        ["intranet.local.:8443"],  # a final dot
        ["", "  ", "intranet.local:8443"],  # empty entries before it
    ):
        assert check_url(url, entries, resolver=no_dns) == url, entries
    with pytest.raises(BlockedUrl):
        check_url(url, ["intranet.local:8444"], resolver=no_dns)


def test_an_allowed_port_means_the_schemes_default_when_the_url_names_none() -> None:
    assert check_url("https://intranet.local/", ["intranet.local:443"], resolver=no_dns)
    assert check_url("http://intranet.local/", ["intranet.local:80"], resolver=no_dns)
    with pytest.raises(BlockedUrl):
        check_url("http://intranet.local/", ["intranet.local:443"], resolver=no_dns)
    with pytest.raises(BlockedUrl):
        check_url("https://intranet.local/", ["intranet.local:80"], resolver=no_dns)


def test_the_guard_reads_a_host_as_chrome_may_send_it() -> None:
    """The egress guard gets the host as Chrome sends it: any case, a final dot, brackets."""
    assert name_reason("Printer.LOCAL.") == "internal host name"
    assert name_reason("[::1]") == "loopback address"
    assert address_reason("fe80::1%eth0") == "link-local or metadata address"
    assert address_reason("example.com") == "not an IP address"
    assert host_allowed("Intranet.Local.", 8443, ["intranet.local:8443"])
    assert host_allowed("[::1]", 8080, ["[::1]:8080"])
    assert not host_allowed("[::1]", 8081, ["[::1]:8080"])


def test_a_long_bad_url_is_quoted_up_to_200_characters() -> None:
    url = "http://exa mple.com/" + "a" * 300
    with pytest.raises(BlockedUrl) as info:
        check_url(url, resolver=no_dns)
    assert str(info.value) == f"not a valid URL: {url[:200]!r}"


def test_the_route_guard_sees_every_internal_request_but_those_to_allowed_hosts() -> None:
    """What the driver routes through its guard: an allowed local service is left alone
    (by host and port), every other internal request is still routed."""
    assert (
        internal_request() is INTERNAL_REQUEST and internal_request(["", " "]) is INTERNAL_REQUEST
    )
    routed = internal_request(["127.0.0.1:8000", "LOCALHOST", "[::1]:8080", "[fd00::5]"])
    for url in (
        "http://[fd00::5]:3000/",  # a host without a port: any port
        "http://127.0.0.1:8000/x",
        "http://user@127.0.0.1:8000/?q",
        "http://localhost/",
        "http://localhost:5000/x",
        "ws://[::1]:8080/socket",
    ):
        assert not routed.match(url), url
    for url in (
        "http://127.0.0.1:9222/json",
        "http://127.0.0.1:80001/",  # a longer port is another port
        "http://127.0.0.1/",
        "http://[::1]:9090/",
        "http://10.0.0.1/",
        "http://printer.local/",
    ):
        assert routed.match(url), url
