"""`make screens`: a PNG of the broadcast screen after each action (search, read, play, stop),
so a person can look at what the audience would see.

Offline: the actions replay recorded sessions (tests/recordings) on a headful Chromium that
fills a virtual display of its own, then a read with a question of a local stand-in of a page
that pins a 170 px header over its article (tests/_onair.py: the passage must sit below it);
each picture is the whole display (Chrome's own UI included), taken when the action returns
and again once the screen has settled.
`SCREENS_DIR=folder` chooses where (default test-results/screens); `--caption` turns the
optional caption on (`SB_CAPTION=true`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._common.display import Display
from browser_core import (
    Driver,
    Settings,
    build_settings,
    launch_chrome,
    save_state,
    stop_pid,
)
from browser_core.recording import replay_hook
from browser_core.stage import drain
from browser_core.testing import free_port
from search.recordings import load_case, run_action

ROOT = Path(__file__).resolve().parents[2]

RECORDINGS = ROOT / "tests" / "recordings"
# (action, recording, question): the read asks what the brain would, so the highlighted
# passage is the one that answers it, far below the article's opening.
ACTIONS = (
    ("search", "google-crow-names-en", None),
    ("read", "article-slashgear-vw-id-space-vizzion", "How many cubic feet is the trunk?"),
    ("play", "youtube-play-first-result-ru", None),
)
SETTLED_S = 1.0  # the smooth scroll's last stretch and the marks' colour
STAND_IN = "header"  # tests/_onair.py: the page read last, with its question


async def replay(
    action: str, case_name: str, base: Settings, question: str | None = None
) -> tuple[bool, str]:
    """Run one recorded action on the owned tab; whether it answered, and a short note."""
    case = load_case(RECORDINGS / case_name)
    settings = case.settings_for(base)
    driver = Driver(settings, page_hooks=(replay_hook(str(case.har)),))
    try:
        outcome = await run_action(driver, action, case.arg, settings, question=question)
        await drain(2.0)  # what the stage still does after the answer, before the loop ends
    finally:
        await driver.close()
    return outcome.ok, outcome.text.splitlines()[1][:90] if outcome.text.count("\n") else ""


async def read_stand_in(url: str, base: Settings) -> tuple[bool, str]:
    """Read a local stand-in page with the question its article answers."""
    from tests._onair import QUESTION

    driver = Driver(base)
    try:
        outcome = await run_action(driver, "read", url, base, question=QUESTION)
        await drain(2.0)
    finally:
        await driver.close()
    return outcome.ok, url


async def stop(base: Settings) -> tuple[bool, str]:
    from search.providers.youtube import control

    driver = Driver(base)
    try:
        status = await control(driver, "stop", base)
    finally:
        await driver.close()
    return status.video_id is None, "stopped"


def shoot(display: Display, out: Path, name: str) -> list[Path]:
    now = display.save_png(out / f"{name}.png")
    time.sleep(SETTLED_S)
    return [now, display.save_png(out / f"{name}-settled.png")]


def run(out: Path, caption: bool) -> int:
    from tests._onair import route_all
    from tests._server import LocalServer

    display = Display()
    tmp = Path(tempfile.mkdtemp(prefix="sb-screens-"))
    os.environ["DISPLAY"] = display.name
    server = LocalServer()
    stand_in = route_all(server)[STAND_IN]
    local = f"127.0.0.1:{server.port}"
    chrome = launch_chrome(
        port=free_port(),
        user_data_dir=str(tmp / "profile"),
        headless=False,
        window=display.size,
        extra_args=("--window-position=0,0",),
        allow_hosts=(local,),
    )
    base = build_settings(
        cdp_port=chrome.port,
        state_dir=str(tmp / "state"),
        cache_ttl_s=0,
        gemini_cli=str(tmp / "no-gemini-here"),
        caption=caption,
        allow_hosts=(local,),
    )
    save_state(base.state_dir, chrome)  # as `stream-browser chrome` does: its start tab is ours
    failed = 0
    try:
        steps: list[tuple[str, Any]] = [
            (action, replay(action, case, base, question)) for action, case, question in ACTIONS
        ]
        steps.append(("stop", stop(base)))
        steps.append((f"read-{STAND_IN}", read_stand_in(stand_in, base)))
        for number, (name, step) in enumerate(steps, 1):
            ok, note = asyncio.run(step)
            failed += not ok
            files = shoot(display, out, f"{number}-{name}")
            print(f"{name:<7} {'ok' if ok else 'FAILED':<7} {files[0]}  {note}")
    finally:
        stop_pid(chrome.pid)
        if chrome.egress_pid:
            stop_pid(chrome.egress_pid)
        server.stop()
        display.close()
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=Path(os.environ.get("SCREENS_DIR") or "test-results/screens")
    )
    parser.add_argument("--caption", action="store_true", help="SB_CAPTION=true")
    args = parser.parse_args(argv)
    return run(args.out, args.caption)


if __name__ == "__main__":
    sys.exit(main())
