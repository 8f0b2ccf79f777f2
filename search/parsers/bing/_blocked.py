"""Bing's walls: its bot challenge (/turing/captcha/, a Turnstile check, "One last step") and
its cookie consent dialog (`#bnp_container`, buttons `#bnp_btn_accept` / `#bnp_btn_reject`)
told from a results page by address and by the markers those pages carry. A consent banner
over a page that holds results is not a wall: the results are read."""

from __future__ import annotations

import re

from .._urls import host_path
from ._urls import BING_HOST

_CAPTCHA_MARKERS = (
    "/turing/captcha/",
    "challenges.cloudflare.com/turnstile",
    "solve the challenge below to continue",
    "one last step",
)
_CONSENT = re.compile(r"""id=["']bnp_(container|overlay_wrapper|btn_reject|btn_accept)["']""")
_RESULTS = re.compile(r"""class=["'][^"']*\b(b_algo|sa_cc)\b""")


def detect_bing_interstitial(html: str, url: str | None) -> str | None:
    """Say whether this is Bing's challenge ("captcha") or consent wall ("consent") page."""
    host, path = host_path(url)
    if BING_HOST.search(host) and path.startswith("/turing/captcha"):
        return "captcha"
    if _RESULTS.search(html):
        return None
    lowered = html.lower()
    if any(marker in lowered for marker in _CAPTCHA_MARKERS):
        return "captcha"
    if _CONSENT.search(html):
        return "consent"
    return None
