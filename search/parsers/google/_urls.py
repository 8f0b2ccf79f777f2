"""Google's links: its /url?q= redirect unwrapped, its own navigation (search, refinements,
the image viewer, ads) told apart from a link to another site."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urljoin, urlsplit

GOOGLE_HOST = re.compile(r"(^|\.)google\.[a-z.]{2,6}$")
_GOOGLE_SEARCH_HOST = re.compile(r"^(www\.)?google\.[a-z.]{2,6}$")
_INTERNAL_PATHS = frozenset(
    {"/search", "/preferences", "/setprefs", "/webhp", "/imgres", "/aclk", "/sorry/index"}
)


def clean_google_url(href: str, base: str | None = None) -> str | None:
    """Unwrap Google's /url?q= redirect; None for Google's own navigation links."""
    absolute = urljoin(base or "https://www.google.com/", href.strip())
    parts = urlsplit(absolute)
    if parts.scheme not in ("http", "https"):
        return None
    if GOOGLE_HOST.search(parts.hostname or "") and parts.path in ("/url", "/interstitial"):
        query = parse_qs(parts.query)
        target = (query.get("q") or query.get("url") or [""])[0]
        return target if target.startswith(("http://", "https://")) else None
    if _is_internal(parts.hostname or "", parts.path, href):
        return None
    return absolute


def _is_internal(host: str, path: str, href: str) -> bool:
    """Google's own navigation: relative links, search/refinement pages, image viewer, ads."""
    if href.startswith(("/", "#", "?")) and not href.startswith("//"):
        return True
    if _GOOGLE_SEARCH_HOST.match(host):
        return path.rstrip("/") in _INTERNAL_PATHS
    return host.endswith("webcache.googleusercontent.com")
