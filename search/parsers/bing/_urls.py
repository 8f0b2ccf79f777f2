"""Bing's links: its /ck/a click wrapper unwrapped (`u=a1` + the target in base64url), its own
navigation (search tabs, related searches, the cache on cc.bingj.com, the translator, ad
clicks) told apart from a link to another site."""

from __future__ import annotations

import base64
import binascii
import re
from urllib.parse import parse_qs, urljoin, urlsplit

BING_HOST = re.compile(r"(^|\.)bing\.(com|net)$")
# Hosts of Bing's own services a result link never points at: the cache, the translator.
_SERVICE_HOST = re.compile(r"(^|\.)(bingj\.com|microsofttranslator\.com)$")
_INTERNAL_PREFIXES = (
    "/search",
    "/images",
    "/videos",
    "/news",
    "/maps",
    "/shop",
    "/travel",
    "/aclk",
    "/aclick",
    "/alink",
    "/th",
    "/rewards",
    "/account",
    "/fd/",
    "/ck/",
    "/translator",
)


def clean_bing_url(href: str, base: str | None = None) -> str | None:
    """Unwrap Bing's /ck/a click wrapper; None for Bing's own navigation links."""
    absolute = urljoin(base or "https://www.bing.com/", href.strip())
    parts = urlsplit(absolute)
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https"):
        return None
    if BING_HOST.search(host) and parts.path == "/ck/a":
        target = _unwrap(parts.query)
        target_host = (urlsplit(target).hostname or "").lower() if target else ""
        return None if _SERVICE_HOST.search(target_host) else target
    if href.startswith(("/", "#", "?")) and not href.startswith("//"):
        return None
    if _SERVICE_HOST.search(host):
        return None
    if BING_HOST.search(host) and parts.path.startswith(_INTERNAL_PREFIXES):
        return None
    return absolute


def _unwrap(query: str) -> str | None:
    """The target of a /ck/a link: `u` is "a1" and the URL in unpadded base64url."""
    wrapped = (parse_qs(query).get("u") or [""])[0]
    if not wrapped.startswith("a1"):
        return None
    payload = wrapped[2:]
    try:
        target = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    return target if target.startswith(("http://", "https://")) else None
