"""`stream-browser demo`: start a local broadcast Chrome and run the main job on it, offline.

The network is served from recorded sessions in tests/recordings (real saved Google and
article pages), so the demo needs no internet and says exactly what it did.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from browser_core import (
    Settings,
    StreamBrowserError,
    cdp_targets,
    configure_logging,
)
from browser_core._replay import RECORDINGS_DIR
from search._cli_dev import ensure_chrome
from search._types import ToolContext


def register(sub: Any) -> None:
    demo = sub.add_parser(
        "demo",
        help="run a search and a page read on a local broadcast Chrome, offline, from recordings",
    )
    demo.add_argument("--headless", action="store_true", help="start Chrome without a window")
    demo.set_defaults(func=cmd_demo)


def _say(text: str) -> None:
    print(f"==> {text}", flush=True)


def _recordings(action: str) -> list[Path]:
    found = []
    for folder in sorted(RECORDINGS_DIR.glob("*/")):
        try:
            meta = json.loads((folder / "action.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        usable = (folder / "session.har").is_file() and not _blocked(folder)
        if meta.get("action") == action and usable:
            found.append(folder)
    return sorted(found, key=lambda p: (not p.name.startswith("demo"), p.name))


def _blocked(folder: Path) -> bool:
    """Recordings of a captcha page are regression cases, not a demo."""
    try:
        expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True
    return bool(isinstance(expected, dict) and expected.get("blocked"))


def _arg_of(folder: Path) -> str:
    return str(json.loads((folder / "action.json").read_text(encoding="utf-8"))["arg"])


def _run_case(settings: Settings, action: str, folder: Path) -> bool:
    from browser_core import Driver
    from browser_core._replay import replay_hook
    from search._recordings import load_case
    from search._tool import BrowseTool

    settings = load_case(folder).settings_for(settings)  # the recording's language and region
    arg = _arg_of(folder)
    _say(
        f"{action} {arg!r} on the broadcast Chrome, network served from recording "
        f"{folder.name} (no internet used)"
    )
    driver = Driver(settings, page_hooks=(replay_hook(str(folder)),))
    tool = BrowseTool(settings, driver=driver)
    started = time.monotonic()
    try:
        walk = tool.run_sync(arg, action=action, ctx=ToolContext(broadcasting=True))
    finally:
        tool.close()
    elapsed = time.monotonic() - started
    result = walk.result
    if result is None or not result.success:
        kinds = ", ".join(f"{h.provider}: {h.failure_kind}" for h in walk.chain) or "no provider"
        _say(f"FAILED after {elapsed:.1f} s ({kinds})")
        return False
    _say(f"answered by {result.provider} in {elapsed:.1f} s; what the brain receives:")
    print(result.reply_text[:1500] + ("\n..." if len(result.reply_text) > 1500 else ""))
    return True


def cmd_demo(args: argparse.Namespace, app: Any) -> int:
    settings: Settings = app.settings
    configure_logging("warning", settings.log_format)  # the demo narrates; logs only on trouble
    try:
        ensure_chrome(settings, headless=args.headless)
    except StreamBrowserError as exc:
        print(f"stream-browser demo: {exc.kind}: {exc}")
        return 1
    before = len(cdp_targets(settings.cdp_endpoint))
    ok = True
    for action in ("search", "read"):
        cases = _recordings(action)
        if not cases:
            _say(f"no recorded {action} session found in {RECORDINGS_DIR}")
            ok = False
            continue
        ok = _run_case(settings, action, cases[0]) and ok
    after = len(cdp_targets(settings.cdp_endpoint))
    _say(f"Chrome targets before {before}, after {after} (one owned tab, reused)")
    _say(
        'next: `stream-browser doctor`, then with internet `stream-browser search "..."`; '
        "stop Chrome with `stream-browser chrome --stop`"
    )
    return 0 if ok else 1
