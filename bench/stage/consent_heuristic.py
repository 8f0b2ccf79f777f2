"""Would autoconsent's heuristic mode earn a place beside its rules? On stand-ins of a generic
consent dialog no rule knows (English, Korean, Japanese, German wording: tests/_onair.py), on
the rule-known stand-ins (tests/pages/consent) and on pages with other dialogs (newsletter,
interstitial, app sheet, a plain article), each mode is run on one local headless Chromium
with autoconsent installed as the stage installs it; per page: what autoconsent reported and
which button of the generic dialog was clicked.

    .venv/bin/python -m bench.stage.consent_heuristic [--modes off,reject,tier1,tier2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections import Counter
from typing import Any

from playwright.async_api import async_playwright

from browser_core import build_settings, launch_chrome, stop_pid
from browser_core.stage import _consent, install_consent
from browser_core.testing import controller_for, free_port
from tests import _onair
from tests._server import LocalServer

KNOWN = ("onetrust", "cookiebot", "didomi", "quantcast", "usercentrics", "sourcepoint")
GENERIC = ("consent-en", "consent-ko", "consent-ja", "consent-de")
OTHER = ("newsletter", "interstitial", "sheet", "plain")
WAIT_S = 4.0  # autoconsent's 20 detection retries and an answer fit in this


def _config_for(mode: str) -> Any:
    base = _consent._config

    def config(opt_in: bool) -> dict[str, Any]:
        value = base(opt_in)
        if mode != "off":
            value.update(
                enableHeuristicDetection=True, heuristicMode=mode, heuristicPopupSearchTimeout=100
            )
        return value

    return config


async def _one(page: Any, url: str) -> tuple[str, str]:
    """(what autoconsent reported, the generic dialog's button clicked or '')."""
    started = time.monotonic()
    await page.goto(url, wait_until="domcontentloaded")
    controller = controller_for(page)
    choice, report = "", "nothing"
    while time.monotonic() - started < WAIT_S:
        choice = await page.evaluate("window.pvChoice || ''")
        events = [e for e in controller.events if e.at >= started] if controller else []
        results = [e for e in events if e.type.endswith("Result")]
        if results:
            report = f"{results[-1].type}:{results[-1].cmp}:{results[-1].result}"
            break
        found = [e for e in events if e.type == "popupFound"]
        report = f"popupFound:{found[-1].cmp}" if found else report
        await asyncio.sleep(0.1)
    return report, choice or await page.evaluate("window.pvChoice || ''")


async def run(modes: list[str], rounds: int) -> None:
    server = LocalServer()
    urls = _onair.route_all(server)
    urls.update({name: server.url(f"/consent/{name}.html") for name in KNOWN})
    tmp = tempfile.mkdtemp(prefix="sb-heuristic-")
    chrome = launch_chrome(
        port=free_port(), user_data_dir=f"{tmp}/profile", headless=True,
        allow_hosts=(f"127.0.0.1:{server.port}",),
    )  # fmt: skip
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.connect_over_cdp(chrome.endpoint)
            context = browser.contexts[0]
            for mode in modes:
                _consent._config = _config_for(mode)
                page = await context.new_page()
                await install_consent(page, build_settings())
                print(f"\nheuristicMode={mode}")
                for name in (*GENERIC, *KNOWN, *OTHER):
                    seen: Counter[str] = Counter()
                    for i in range(rounds):
                        report, choice = await _one(page, f"{urls[name]}?{mode}-{i}")
                        seen[f"{report} clicked={choice or '-'}"] += 1
                    print(f"  {name:<13} " + "; ".join(f"{k} x{n}" for k, n in seen.items()))
                await page.close()
            await browser.close()
    finally:
        stop_pid(chrome.pid)
        if chrome.egress_pid:
            stop_pid(chrome.egress_pid)
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default="off,reject,tier1,tier2")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(run(args.modes.split(","), args.rounds))


if __name__ == "__main__":
    main()
