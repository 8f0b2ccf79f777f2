"""The navigation policy: what may be shown on a public stream."""

from __future__ import annotations

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
    assert check_url(url, resolver=no_dns) == url


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
