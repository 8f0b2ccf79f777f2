"""Google's links: its /url?q= redirect unwrapped, its own navigation (search, refinements,
the image viewer, ads) told apart from a link to another site."""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import parse_qs, urljoin, urlsplit

from lxml.etree import _Element

GOOGLE_HOST = re.compile(r"(^|\.)google\.[a-z.]{2,6}$")
# Google's pages about the searcher (sign-in, settings, policies): never a result.
ACCOUNT_HOST = re.compile(
    r"^(accounts|myaccount|myactivity|adssettings|policies|consent|history|takeout|ogs|lens"
    r"|translate)"
    r"\.google\.|(^|\.)(gstatic|googleusercontent|googleadservices|doubleclick)\."
)
_GOOGLE_SEARCH_HOST = re.compile(r"^(www\.)?google\.[a-z.]{2,6}$")
_INTERNAL_PATHS = frozenset(
    {"/search", "/preferences", "/setprefs", "/webhp", "/imgres", "/aclk", "/sorry/index"}
)


@lru_cache(maxsize=4096)
def clean_google_url(href: str, base: str | None = None) -> str | None:
    """Unwrap Google's /url?q= redirect; None for Google's own navigation links (cached: a
    page's links are read by several block families and its health check)."""
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


# A search of another tab (images, news, videos, books, shopping): by its address's `tbm=`
# or `udm=` (14 is the web tab), or, on a saved page without its address, by the address a
# saved copy's note names (in the page's first lines) or its search form's `tbm` field.
_TAB_PARAM = re.compile(r"[?&;](?:amp;)?(?:tbm=(\w+)|udm=(\d+))")
_SAVED_URL = re.compile(r"<!--[^>]{0,200}?url: (\S+)")
_WEB_TABS = frozenset({"", "14"})


def other_tab(html: str, url: str | None, doc: _Element | None = None) -> str | None:
    """The tab a results page is of when it is not the web one ("isch", "nws", "2", ...)."""
    if url is None:
        saved = _SAVED_URL.search(html, 0, 2000)
        url = saved.group(1) if saved else None
    if url is None and doc is not None:
        field = doc.xpath('//form//input[@name="tbm"]/@value')
        refresh = doc.xpath('//meta[starts-with(@content, "0;url=/search?")]/@content')
        return _tab(f"&tbm={field[0]}") if field else _tab(refresh[0]) if refresh else None
    return _tab(url or "")


def _tab(address: str) -> str | None:
    found = _TAB_PARAM.search(address)
    if found is None:
        return None
    tab = next((group for group in found.groups() if group), "")
    return None if tab in _WEB_TABS else tab
