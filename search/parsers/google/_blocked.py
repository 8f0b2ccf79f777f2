"""Google's walls: the "unusual traffic" captcha page and the consent interstitial, told from
a results page by address and by the few markers those small pages carry."""

from __future__ import annotations

import re

from .._urls import host_path
from ._urls import GOOGLE_HOST

_SMALL_PAGE = 60_000
_CONSENT_HOST = re.compile(r"^consent\.(google\.[a-z.]{2,6}|youtube\.com)$")
_SORRY_MARKERS = ("/sorry/", "unusual traffic", "g-recaptcha", "captcha-form")
_CONSENT_FORM = re.compile(r"""action=["']https://consent\.(google\.[a-z.]{2,6}|youtube\.com)/""")


def detect_interstitial(html: str, url: str | None) -> str | None:
    """Say whether this is Google's captcha ("captcha") or cookie wall ("consent") page."""
    host, path = host_path(url)
    if host == "sorry.google.com" or (GOOGLE_HOST.search(host) and path.startswith("/sorry/")):
        return "captcha"
    if _CONSENT_HOST.match(host):
        return "consent"
    head = html[: _SMALL_PAGE * 4]
    if len(html) <= _SMALL_PAGE:
        lowered = html.lower()
        if any(marker in lowered for marker in _SORRY_MARKERS):
            return "captcha"
    if _CONSENT_FORM.search(head) and 'id="rso"' not in html and 'id="search"' not in html:
        return "consent"
    return None
