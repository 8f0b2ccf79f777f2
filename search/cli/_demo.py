"""`stream-browser demo`: start a local broadcast Chrome and run the main job on it, offline.

The job goes the way the brain's calls go: the service (`stream-browser serve`, here in this
process on a free loopback port) drives Chrome, and the standard-library client asks it. The
network is served from recorded sessions in tests/recordings (real saved Google and article
pages), so the demo needs no internet and says exactly what it did.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from browser_core import (
    Settings,
    SettingsError,
    StreamBrowserError,
    cdp_targets,
    configure_logging,
)
from browser_core.recording import recordings_dir
from search import client
from search.cli._demo_challenge import Challenge
from search.cli._dev import ensure_chrome

CHALLENGE_WAIT_S = 600.0  # how long `--challenge` waits for a person to solve it


def register(sub: Any) -> None:
    demo = sub.add_parser(
        "demo",
        help="run a search and a page read on a local broadcast Chrome, offline, from recordings",
    )
    demo.add_argument("--headless", action="store_true", help="start Chrome without a window")
    demo.add_argument(
        "--challenge",
        action="store_true",
        help="then meet a local stand-in of Google's 'unusual traffic' page: solve it from the "
        "console (take the screen, tick the box, give back) and the search runs on screen again",
    )
    demo.set_defaults(func=cmd_demo)


def _say(text: str) -> None:
    print(f"==> {text}", flush=True)


def _recordings(action: str) -> list[Path]:
    found = []
    for folder in sorted(recordings_dir().glob("*/")):
        try:
            meta = json.loads((folder / "action.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        usable = (folder / "session.har").is_file() and _answered(folder)
        if meta.get("action") == action and usable:
            found.append(folder)
    # A demo recording first, then one Google answered (the engine a search asks first).
    return sorted(
        found, key=lambda p: (not p.name.startswith("demo"), _answered_by(p) != "google", p.name)
    )


def _answered_by(folder: Path) -> str:
    """The provider whose answer the recording pins."""
    try:
        expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
        return str(expected["result"]["provider"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def _answered(folder: Path) -> bool:
    """The recording pins an answer (`expected.json`: what the brain receives). One that
    pins a failure, such as a captcha page, or a results page whose parse is suspect (a kept
    case: the generic reading), is a regression case, not a demo."""
    try:
        expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    result = expected.get("result") if isinstance(expected, dict) else None
    if not isinstance(result, dict) or not result.get("success"):
        return False
    data = result.get("data")
    health = data.get("health") if isinstance(data, dict) else None
    return not (isinstance(health, dict) and health.get("state") == "suspect")


def _arg_of(folder: Path) -> str:
    return str(json.loads((folder / "action.json").read_text(encoding="utf-8"))["arg"])


def _replay_all(folders: list[Path]) -> Any:
    """One page hook serving the owned tab from every recording (unmatched: aborted)."""
    from browser_core.recording import resolve_har

    hars = [resolve_har(str(folder)) for folder in folders]

    async def hook(page: Any) -> None:
        for index, har in enumerate(hars):  # the last registered is asked first
            await page.route_from_har(har, not_found="abort" if index == 0 else "fallback")

    return hook


@contextlib.contextmanager
def _service(
    settings: Settings, folders: list[Path], challenge: Challenge
) -> Iterator[tuple[Any, Any]]:
    """`stream-browser serve` on a free loopback port in this process, for the demo; with
    the tool it serves."""
    from browser_core import Driver
    from search._tool import BrowseTool
    from search.recordings._runner import load_case
    from search.service import prepare

    for folder in reversed(folders):  # the search recording's language and region win
        settings = load_case(folder).settings_for(settings)
    settings = settings.model_copy(
        update={
            "service_host": "127.0.0.1",
            "service_port": 0,
            "service_socket": None,
            "service_token": SecretStr(secrets.token_urlsafe(24)),
        }
    )
    driver = Driver(settings, page_hooks=(_replay_all(folders), challenge.hook()))
    tool = BrowseTool(settings, driver=driver)
    prepared = prepare(settings, tool)
    prepared.listen()  # the console hears the egress refusals too
    thread = threading.Thread(target=prepared.run, name="demo-service", daemon=True)
    thread.start()
    try:
        yield prepared, tool
    finally:
        prepared.stop()
        thread.join(30)


def _run_case(service: Any, action: str, folder: Path) -> bool:
    arg = _arg_of(folder)
    _say(
        f"{action} {arg!r} through the service with the standard-library client "
        f"(search.client); network served from recording {folder.name}, no internet used"
    )
    started = time.monotonic()
    answer = client.browse(
        arg, action=action, broadcasting=True, service_url=service.url, token=service.token
    )
    elapsed = time.monotonic() - started
    result = answer.get("result") if answer else None
    if not isinstance(result, dict) or not result.get("success"):
        chain = answer.get("chain", []) if answer else []
        kinds = ", ".join(f"{h['provider']}: {h['failure_kind']}" for h in chain) or "no answer"
        _say(f"FAILED after {elapsed:.1f} s ({kinds})")
        return False
    _say(f"answered by {result['provider']} in {elapsed:.1f} s; what the brain receives:")
    text = str(result["reply_text"])
    print(text[:1500] + ("\n..." if len(text) > 1500 else ""))
    return True


def _challenge(service: Any, tool: Any, folder: Path, challenge: Challenge) -> bool:
    """The search again, on Google's challenge (the local stand-in): the console's alert, a
    person solving it from the console, and the search answered on screen once more."""
    arg = _arg_of(folder)
    challenge.arm()
    _say(
        f"search {arg!r} again, now on a local stand-in of Google's 'unusual traffic' page "
        "(served inside Chrome, like the recordings)"
    )
    answer = client.browse(
        arg, action="search", broadcasting=True, service_url=service.url, token=service.token
    )
    chain = answer.get("chain", []) if answer else []
    route = ", ".join(f"{h['provider']}: {h['failure_kind'] or 'ok'}" for h in chain)
    _say(f"the walk: {route or 'no answer'} (offline, nothing else answers here)")
    for alert in tool.alerts.active():  # what the console and /v1/status show
        _say(f"the console's alert: {alert['provider']}: {alert['kind']} ({alert['detail']})")
    _say(
        "in the console: press Take the screen, tick the box on the picture, press Give back "
        f"(waiting up to {CHALLENGE_WAIT_S / 60:.0f} minutes)"
    )
    give_up = time.monotonic() + CHALLENGE_WAIT_S
    while time.monotonic() < give_up:
        if challenge.solved.is_set() and tool.driver.hold.current() is None:
            break
        time.sleep(0.5)
    else:
        _say("the challenge was not solved in time; the demo goes on without it")
        return False
    # Google lets a profile that solved its challenge search again: so does the walk (the
    # console's Give back and Dismiss end the rest too; the box may have been ticked elsewhere).
    tool.end_rests()
    _say("solved: the profile holds the challenge's cookie and the screen is given back")
    return _run_case(service, "search", folder)


def _console(settings: Settings, service: Any) -> None:
    """The console's address, and where its token is (a file, never printed)."""
    path = Path(settings.state_dir).expanduser() / "demo-console-token"
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(service.token + "\n")
    _say(
        f"the console: open {service.url}/console in your browser and sign in with the "
        f"token in {path} (`cat {path}`); docs/console.md says what each part shows"
    )


def _stay_up() -> None:
    """On a terminal the demo's service stays up until Enter, so the console can be opened."""
    if sys.stdin.isatty():
        with contextlib.suppress(EOFError, KeyboardInterrupt):
            input("==> press Enter to stop the demo's service (and its console) ")
    else:
        _say("(not a terminal: the demo's service stops now; `stream-browser serve` has one too)")


def _tabs(settings: Settings) -> int:
    """Tabs (page targets; Chrome's own UI targets are not tabs)."""
    return len([t for t in cdp_targets(settings.cdp_endpoint) if t.get("type") == "page"])


def cmd_demo(args: argparse.Namespace, app: Any) -> int:
    from search.cli._core import refuse_off_air

    settings: Settings = app.settings
    # The demo narrates every step and failure itself: only errors are logged (a missing
    # Gemini login, say, is a warning that does not concern an offline browser demo).
    configure_logging("error", settings.log_format)
    if refuse_off_air(settings, "demo"):
        return 1
    try:
        ensure_chrome(settings, headless=args.headless)
    except StreamBrowserError as exc:
        print(f"stream-browser demo: {exc.kind}: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, SettingsError) else 1
    before = _tabs(settings)
    cases = {action: _recordings(action) for action in ("search", "read")}
    missing = [action for action, found in cases.items() if not found]
    for action in missing:
        _say(
            f"no recorded {action} session found in {recordings_dir()}: run the demo from "
            "the project folder (`make demo`), or set SB_RECORDINGS_DIR to its tests/recordings"
        )
    folders = [found[0] for found in cases.values() if found]
    ok = not missing
    challenge = Challenge()
    with _service(settings, folders, challenge) as (service, tool):
        _say(f"service started at {service.url} (`stream-browser serve`, bearer token)")
        for action, found in cases.items():
            if found:
                ok = _run_case(service, action, found[0]) and ok
        after = _tabs(settings)
        _say(f"Chrome tabs before {before}, after {after} (one owned tab, reused)")
        _say(
            "next: `stream-browser doctor`, `stream-browser serve` for the brain (README), "
            'then with internet `stream-browser search "..."`; stop Chrome with '
            "`stream-browser chrome --stop`"
        )
        _console(settings, service)
        if args.challenge and cases["search"]:
            ok = _challenge(service, tool, cases["search"][0], challenge) and ok
        _stay_up()
    return 0 if ok else 1
