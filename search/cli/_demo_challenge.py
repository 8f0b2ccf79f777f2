"""`stream-browser demo --challenge`: a local stand-in of Google's "unusual traffic" page,
solved by hand from the console (docs/console.md, "Taking the screen").

Once armed, the demo's owned tab is answered with the stand-in for any Google search until the
broadcast profile holds the stand-in's cookie (a nonce of this run, so every demo meets a fresh
challenge); the search then goes on to the recording as before. Nothing leaves the machine:
the stand-in is fulfilled inside Chrome by a route, like the recordings.
"""

from __future__ import annotations

import secrets
import threading
from typing import Any

from playwright.async_api import Error as PlaywrightError

COOKIE = "SB_DEMO_CHALLENGE"

# The shape of Google's page (its words, a reCAPTCHA box) with a plain checkbox for the box.
_PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>Before you continue (a local stand-in of Google's challenge)</title>
<style>body{{font:18px/1.5 arial,sans-serif;margin:0;padding:48px 64px;color:#222}}
label{{display:inline-flex;align-items:center;gap:18px;margin:28px 0;padding:22px 28px;
border:1px solid #d3d3d3;border-radius:4px;background:#f9f9f9;font-size:22px;cursor:pointer}}
input{{width:36px;height:36px}} small{{color:#666}}</style></head><body>
<h1>Our systems have detected unusual traffic from your computer network</h1>
<p>This page checks to see if it's really you sending the requests, and not a robot.</p>
<div class="g-recaptcha"><label><input type="checkbox" id="robot"> I'm not a robot</label></div>
<p><small>stream-browser demo: a local stand-in of Google's challenge. Tick the box from the
console's "Take the screen" and give the screen back.</small></p>
<script>document.getElementById("robot").addEventListener("change", () => {{
  document.cookie = "{cookie}={nonce}; path=/; max-age=3600; secure";
  setTimeout(() => location.reload(), 400);
}});</script></body></html>"""


class Challenge:
    """The stand-in: off until `arm()`; `solved` is set once a search carries its cookie."""

    def __init__(self) -> None:
        self.nonce = secrets.token_hex(8)
        self.armed = threading.Event()
        self.solved = threading.Event()

    def arm(self) -> None:
        self.armed.set()

    @property
    def page(self) -> str:
        return _PAGE.format(cookie=COOKIE, nonce=self.nonce)

    def hook(self) -> Any:
        """A page hook: registered after the recordings' routes, so asked first."""

        async def answer(route: Any) -> None:
            try:
                if not self.armed.is_set():
                    await route.fallback()
                    return
                cookie = await route.request.header_value("cookie") or ""
                if f"{COOKIE}={self.nonce}" in cookie:
                    self.solved.set()
                    await route.fallback()
                    return
                await route.fulfill(body=self.page, content_type="text/html; charset=utf-8")
            except PlaywrightError:  # the page closed under the route
                return

        async def hook(page: Any) -> None:
            await page.route(lambda url: url.startswith("https://www.google.com/search?"), answer)

        return hook
