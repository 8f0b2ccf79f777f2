"""The navigation policy: what may be shown on a public stream."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from browser_core import BlockedUrl, check_url


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
