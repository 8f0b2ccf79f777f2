"""What answering consent banners costs a navigation: two tabs of one local Chromium, one with
autoconsent installed (browser_core/stage/_consent.py), one without, take turns loading the
same local pages; medians of goto (DOMContentLoaded) plus a first read of the text, and on a
page with a OneTrust stand-in the time until the banner is gone.

    .venv/bin/python -m bench.stage.consent [--runs 30]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from typing import Any

from playwright.async_api import async_playwright

from browser_core import build_settings, launch_chrome, stop_pid
from browser_core.stage import install_consent
from browser_core.testing import free_port
from tests._server import LocalServer, Reply

ARTICLE = (
    "<html><head><title>Tides</title></head><body><article>"
    + "".join(
        f"<p>Paragraph {i}: " + "the tide comes in and goes out. " * 12 + "</p>" for i in range(60)
    )
    + "</article></body></html>"
)
GONE = (
    "(() => { const b = document.getElementById('onetrust-banner-sdk');"
    " return !!document.documentElement.dataset.consentClicked"
    " && (!b || getComputedStyle(b).display === 'none'); })()"
)


async def _load(page: Any, url: str) -> float:
    started = time.perf_counter()
    await page.goto(url, wait_until="domcontentloaded")
    await page.evaluate("document.body.innerText.length")
    return (time.perf_counter() - started) * 1000


async def _until_gone(page: Any, url: str) -> float:
    started = time.perf_counter()
    await page.goto(url, wait_until="domcontentloaded")
    while not await page.evaluate(GONE):
        if time.perf_counter() - started > 10:
            return float("nan")
        await asyncio.sleep(0.02)
    return (time.perf_counter() - started) * 1000


async def run(runs: int) -> None:
    server = LocalServer()
    server.route("/article", Reply(ARTICLE))
    tmp = tempfile.mkdtemp(prefix="sb-consent-bench-")
    chrome = launch_chrome(
        port=free_port(), user_data_dir=f"{tmp}/profile", headless=True,
        allow_hosts=(f"127.0.0.1:{server.port}",),
    )  # fmt: skip
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.connect_over_cdp(chrome.endpoint)
            context = browser.contexts[0]
            on, off = await context.new_page(), await context.new_page()
            await install_consent(on, build_settings())
            rows: dict[str, list[float]] = {"on": [], "off": [], "banner": []}
            for i in range(runs):
                order = ((on, "on"), (off, "off")) if i % 2 else ((off, "off"), (on, "on"))
                for page, name in order:
                    rows[name].append(await _load(page, server.url(f"/article?{i}")))
                rows["banner"].append(
                    await _until_gone(on, server.url(f"/consent/onetrust.html?{i}"))
                )
            await browser.close()
    finally:
        stop_pid(chrome.pid)
        server.stop()
    with_ms, without_ms = statistics.median(rows["on"]), statistics.median(rows["off"])
    print(
        f"navigation + first read, median of {runs}: with autoconsent {with_ms:.0f} ms, "
        f"without {without_ms:.0f} ms: {with_ms - without_ms:+.0f} ms ({with_ms / without_ms:.2f}x)"
    )
    print(f"OneTrust stand-in: banner rejected and gone {statistics.median(rows['banner']):.0f} ms "
          "after the navigation started (median; the stand-in draws it at 150 ms, "
          "autoconsent waits 500 ms before its OneTrust opt-out)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    asyncio.run(run(parser.parse_args().runs))


if __name__ == "__main__":
    main()
