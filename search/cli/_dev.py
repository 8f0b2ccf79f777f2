"""Developer commands: `debug` (watch an action in a visible Chrome, with a trace) and `record`
(pin a live session as a regression case in `tests/recordings/NAME/`).
(The recording machinery itself is in `search.recordings._runner`.)
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import structlog
from playwright.async_api import Error as PlaywrightError

from browser_core import (
    CdpUnreachable,
    ChromeProcess,
    Driver,
    Settings,
    StreamBrowserError,
    cdp_version,
    configure_logging,
    ensure_state_dir,
    launch_chrome,
    save_state,
)
from browser_core.recording import (
    RECORDINGS_DIR,
    SessionRecorder,
    highlight,
    highlight_inputs,
    replay_hook,
    slow_motion,
    step_timer,
)
from search.cli._common import int_in
from search.recordings._runner import (
    ACTIONS,
    ActionOutcome,
    Case,
    case_options,
    compare,
    error_payload,
    replay_plan,
    run_action,
    run_case,
    write_case,
    write_expected,
)

log = structlog.get_logger("search.cli_dev")

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
# What to outline once an action is done: selector, label, how many.
_RESULT_MARKS = {
    "search": ("a:has(h3)", "result", 5),
    "read": ("article, main, [role=main]", "read", 1),
    "play": ("video", "playing", 1),
}

# -- the broadcast Chrome for developer sessions ------------------------------------------------


def ensure_chrome(settings: Settings, *, headless: bool) -> ChromeProcess | None:
    """Attach to the broadcast Chrome, or start a local one (headful unless `headless`)."""
    endpoint = settings.cdp_endpoint
    try:
        version = cdp_version(endpoint)
    except CdpUnreachable:
        if settings.cdp_url:
            raise StreamBrowserError(
                f"nothing answers at CDP_URL={endpoint}",
                hint="start that Chrome, or unset CDP_URL so a local one is started",
            ) from None
    else:
        agent = version.get("User-Agent", "")
        print(f"attached to the broadcast Chrome at {endpoint} ({version.get('Browser', '?')})")
        if "Headless" in agent:
            print("  this Chrome is headless: there is nothing to watch; the trace shows it all")
        return None
    ensure_state_dir(settings.state_dir)  # else Chrome would run with no way to stop it
    proc = launch_chrome(
        port=settings.cdp_port,
        user_data_dir=settings.chrome_user_data_dir,
        binary=settings.chrome_binary,
        headless=headless,
        window=settings.window,
        allow_hosts=settings.allow_hosts,
    )
    save_state(settings.state_dir, proc)
    print(
        f"started a local Chrome: pid {proc.pid}, CDP {proc.endpoint}"
        + (" (headless)" if headless else "")
    )
    if proc.display and not os.environ.get("DISPLAY"):
        print(
            f"  it is on the virtual display {proc.display} (Xvfb). Watch it with VNC:\n"
            f"    x11vnc -display {proc.display} -localhost -nopw -forever &\n"
            "    then point a VNC viewer at localhost:5900 "
            "(from another machine: ssh -L 5900:localhost:5900 THIS_HOST)"
        )
    elif proc.display:
        print(f"  it is on your display {proc.display}")
    print(f"  it keeps running; stop it with: stream-browser chrome --stop --port {proc.port}")
    return proc


def _show_trace_lines(path: Path) -> str:
    return (
        f"trace: {path}\n"
        f"view it with: playwright show-trace {path}\n"
        f"  (no Playwright browser installed? `playwright show-trace --port 9323 {path}` "
        "serves it for any browser, or drop the file on https://trace.playwright.dev)"
    )


# -- debug -------------------------------------------------------------------------------------


def register(sub: Any) -> None:
    """Add `debug` and `record` to the `stream-browser` subcommands."""
    debug = sub.add_parser("debug", help="watch an action in a visible Chrome, with a trace")
    _common(debug)
    debug.add_argument(
        "--slowmo",
        type=int,
        default=500,
        metavar="MS",
        help="hold each page this long before the next navigation (default 500)",
    )
    debug.add_argument(
        "--pause",
        action="store_true",
        help="pause when done (Playwright Inspector, or Enter in the terminal)",
    )
    debug.add_argument("--trace", metavar="PATH", help="trace file (default test-results/debug/)")
    debug.add_argument(
        "--replay", metavar="NAME_OR_HAR", help="serve the network from a recording (offline)"
    )
    debug.set_defaults(func=cmd_debug)

    record = sub.add_parser("record", help="record a live session as tests/recordings/NAME")
    _common(record)
    record.add_argument("--name", required=True, help="folder name: lower case, digits, - and _")
    record.add_argument("--dir", default=str(RECORDINGS_DIR), help="where recordings live")
    record.add_argument(
        "--full",
        action="store_true",
        help="keep every response (scripts, images); default: documents, media, xhr and fetch only",
    )
    record.add_argument("--force", action="store_true", help="replace an existing recording")
    record.set_defaults(func=cmd_record)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=ACTIONS)
    parser.add_argument("arg", metavar="ARG", help="the query, URL or video")
    parser.add_argument(
        "--read-top",
        type=int_in(0, 3),
        default=0,
        metavar="N",
        help="search: also read the top N results (0-3)",
    )
    parser.add_argument(
        "--headless",
        action="store_true",
        help="when a local Chrome has to be started, start it headless",
    )


def _debug_hooks(args: argparse.Namespace, recorder: SessionRecorder) -> tuple[Any, ...]:
    hooks: list[Any] = [replay_hook(args.replay)] if args.replay else []
    hooks += [recorder.hook, step_timer(), highlight_inputs]
    if args.slowmo > 0:
        hooks.append(slow_motion(args.slowmo))
    return tuple(hooks)


async def _mark_result(driver: Driver, action: str, hold_ms: int) -> None:
    selector, label, limit = _RESULT_MARKS[action]

    async def op(page: Any) -> None:
        shown = await highlight(page, selector, label, limit=limit, ms=max(hold_ms, 1500))
        log.info("debug.highlighted", selector=selector, count=shown)
        await asyncio.sleep(hold_ms / 1000)

    await driver.run("debug.highlight", op, timeout=hold_ms / 1000 + 10)


def _inspector_possible() -> str | None:
    """Why the Playwright Inspector cannot open here, or None when it can."""
    if not os.environ.get("DISPLAY"):
        return "there is no $DISPLAY for its window"
    browsers = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or "~/.cache/ms-playwright")
    if any(browsers.expanduser().glob("chromium-*")) or shutil.which("google-chrome"):
        return None
    return (
        "it needs a Playwright Chromium or Google Chrome for its own window, and only "
        "Debian's chromium is installed"
    )


async def _pause(driver: Driver, settings: Settings) -> None:
    reason = _inspector_possible()
    if reason is None:
        print("paused in the Playwright Inspector: press Resume (F8) there to finish")
        await driver.run("debug.pause", lambda page: page.pause(), timeout=24 * 3600)
        return
    print(
        f"the Playwright Inspector cannot open: {reason}.\n"
        f"  The tab stays as it is: look at it in the Chrome window, or open DevTools on it\n"
        f"  from another Chrome via chrome://inspect (target {settings.cdp_endpoint})."
    )
    if not sys.stdin.isatty():
        print("  no terminal to resume from: not pausing")
        return
    await asyncio.to_thread(input, "  press Enter to finish ")


async def _debug_session(
    args: argparse.Namespace, settings: Settings, driver: Driver, recorder: SessionRecorder
) -> tuple[ActionOutcome | None, Path | None]:
    started = time.monotonic()
    outcome: ActionOutcome | None = None
    try:
        outcome = await run_action(driver, args.action, args.arg, settings, read_top=args.read_top)
        log.info(
            "debug.action_done",
            action=args.action,
            ok=outcome.ok,
            elapsed_ms=int((time.monotonic() - started) * 1000),
        )
        print(outcome.text, flush=True)  # visible while the result is outlined or paused
        await _mark_result(driver, args.action, args.slowmo)
        if args.pause:
            await _pause(driver, settings)
    except StreamBrowserError as exc:
        log.warning(
            "debug.action_failed",
            failure_kind=exc.kind,
            error=str(exc)[:300],
            elapsed_ms=int((time.monotonic() - started) * 1000),
        )
        print(f"stream-browser: {exc.kind}: {exc}", file=sys.stderr)
    finally:
        trace = await _stop_quietly(recorder)
        await driver.close()
    return outcome, trace


async def _stop_quietly(recorder: SessionRecorder) -> Path | None:
    try:
        return await recorder.stop()
    except (PlaywrightError, OSError) as exc:  # a lost trace must not hide the result
        log.warning(
            "debug.trace_lost",
            error=str(exc)[:300],
            hint="the connection to Chrome was lost before the trace was written",
        )
        return None


def cmd_debug(args: argparse.Namespace, app: Any) -> int:
    from search.cli._core import refuse_off_air

    settings: Settings = app.settings
    if refuse_off_air(settings, "debug"):  # it drives the broadcast Chrome
        return 1
    configure_logging(settings.log_level, fmt="console")
    default = Path("test-results/debug") / f"{args.action}-{dt.datetime.now():%Y%m%d-%H%M%S}.zip"
    trace_path = Path(args.trace or default).expanduser().resolve()
    recorder = SessionRecorder(trace_path=trace_path, title=f"debug {args.action} {args.arg}")
    try:
        if args.replay:  # the recording's own language, region and tab
            plan = replay_plan(args.replay, settings, action=args.action, arg=args.arg)
            settings = plan.settings
            if plan.note:
                print(f"stream-browser: note: {plan.note}", file=sys.stderr)
        driver = Driver(settings, page_hooks=_debug_hooks(args, recorder))
    except StreamBrowserError as exc:  # e.g. an unknown --replay name
        print(f"stream-browser: {exc.kind}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        ensure_chrome(settings, headless=args.headless)
    except StreamBrowserError as exc:
        print(f"stream-browser: {exc.kind}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    outcome, trace = asyncio.run(_debug_session(args, settings, driver, recorder))
    if trace is not None:
        print(_show_trace_lines(trace))
    return EXIT_OK if outcome is not None and outcome.ok else EXIT_FAILED


# -- record ------------------------------------------------------------------------------------


async def _record_live(
    args: argparse.Namespace, settings: Settings, recorder: SessionRecorder
) -> dict[str, Any]:
    driver = Driver(settings, page_hooks=(recorder.hook, step_timer()))
    try:
        try:
            outcome = await run_action(
                driver, args.action, args.arg, settings, read_top=args.read_top
            )
            payload = outcome.payload
        except StreamBrowserError as exc:
            payload = error_payload(exc)
        await recorder.stop()
    finally:
        await driver.close()
    return payload


def _record_target(args: argparse.Namespace) -> Path:
    if not _NAME.match(args.name):
        raise StreamBrowserError(
            f"--name {args.name!r} is not a usable folder name",
            hint="use lower case letters, digits, - and _ (e.g. google-weather-en)",
        )
    folder = Path(args.dir).expanduser() / args.name
    if folder.exists() and not args.force:
        raise StreamBrowserError(
            f"{folder} already exists", hint="pick another --name, or pass --force to replace it"
        )
    if folder.exists():
        shutil.rmtree(folder)
    return folder


def cmd_record(args: argparse.Namespace, app: Any) -> int:
    from search.cli._core import refuse_off_air

    settings: Settings = app.settings
    if refuse_off_air(settings, "record"):  # it drives the broadcast Chrome
        return 1
    try:
        folder = _record_target(args)
    except StreamBrowserError as exc:
        print(f"stream-browser: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        ensure_chrome(settings, headless=args.headless)
    except StreamBrowserError as exc:
        print(f"stream-browser: {exc.kind}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    trace_path = (Path("test-results/recordings") / args.name / "trace.zip").resolve()
    recorder = SessionRecorder(
        trace_path=trace_path,
        har_path=folder / "session.har",
        title=f"record {args.name}",
        slim=not args.full,
    )
    try:
        live = asyncio.run(_record_live(args, settings, recorder))
    except StreamBrowserError as exc:  # a page the recording could not keep whole
        shutil.rmtree(folder, ignore_errors=True)
        print(f"stream-browser: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if not recorder.har_path or not recorder.har_path.is_file():
        print(f"stream-browser: nothing was recorded ({json.dumps(live)[:300]})", file=sys.stderr)
        return EXIT_FAILED
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    case = write_case(
        folder,
        args.action,
        args.arg,
        case_options(settings, args.action, args.read_top, arg=args.arg),
        f"recorded live with `stream-browser record` on {stamp} "
        f"({len(recorder.urls)} requests seen, scrubbed)",
    )
    replayed = asyncio.run(run_case(case, settings))
    write_expected(case, replayed)
    return _report_record(case, live, replayed, trace_path)


def _report_record(
    case: Case, live: dict[str, Any], replayed: dict[str, Any], trace_path: Path
) -> int:
    size_kb = case.har.stat().st_size // 1024 if case.har.is_file() else 0
    print(f"recorded {case.name}: {case.path} (session.har {size_kb} KB)")
    print(_show_trace_lines(trace_path))
    print("  (the trace is not scrubbed: it stays out of tests/recordings/)")
    differences = compare(case.action, live, replayed)
    if differences:
        print(
            "warning: the replay does not reproduce the live run:\n  " + "\n  ".join(differences),
            file=sys.stderr,
        )
        return EXIT_FAILED
    print(
        f"the replay reproduces the live run; test it with: "
        f"pytest tests/test_recordings.py -k {case.name}"
    )
    return EXIT_OK
