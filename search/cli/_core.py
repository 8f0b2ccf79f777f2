"""CLI commands for people: chrome, doctor, search, read, play and its controls, ask.

Every browser command attaches to the broadcast Chrome, adopts the owned tab (the same tab
every time, remembered in the state dir) and leaves Chrome running when it exits.
"""

from __future__ import annotations

import argparse
import platform
import sys
from typing import Any

from browser_core import (
    CdpUnreachable,
    Driver,
    Settings,
    SettingsError,
    StreamBrowserError,
    cdp_targets,
    cdp_version,
    egress_status,
    ensure_state_dir,
    launch_chrome,
    load_state,
    save_state,
    screen_findings,
    state_file,
    stop_pid,
)
from browser_core.recording import replay_hook
from browser_core.stage import check_fonts, consent_check
from search._types import ACTIONS, ENGINE_NAMES, ToolContext
from search._version import version
from search.cli._common import PORT, int_in
from search.recordings._runner import flag_overrides, replay_plan

READ_TOP = int_in(0, 3)  # the service's bound too

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def register(sub: Any) -> None:
    chrome = sub.add_parser("chrome", help="start (or stop) the local broadcast Chrome")
    chrome.add_argument("--port", type=PORT, help="CDP port (default CDP_PORT, 9222)")
    chrome.add_argument("--headless", action="store_true", help="no window at all")
    chrome.add_argument("--stop", action="store_true", help="stop the Chrome this command started")
    chrome.add_argument(
        "--force", action="store_true", help="start it even with STREAM_BROWSER=false"
    )
    chrome.set_defaults(func=cmd_chrome)

    doctor = sub.add_parser("doctor", help="check settings, Chrome, the Gemini CLI and API key")
    doctor.set_defaults(func=cmd_doctor)

    search = sub.add_parser("search", help="web search on the broadcast Chrome (Google, Bing)")
    search.add_argument("query")
    search.add_argument(
        "--read-top",
        type=READ_TOP,
        default=0,
        metavar="N",
        help="also read the top N results (0-3)",
    )
    search.add_argument(
        "--engine",
        choices=ENGINE_NAMES,
        help="this engine alone (default: SB_SEARCH_ENGINES, in order)",
    )
    _common(search)
    search.set_defaults(func=cmd_search)

    read = sub.add_parser("read", help="open a page on the broadcast Chrome and read its text")
    read.add_argument("url")
    _common(read)
    read.set_defaults(func=cmd_read)

    play = sub.add_parser(
        "play", help="play a YouTube video (query or URL) on the broadcast Chrome"
    )
    play.add_argument("target", metavar="QUERY_OR_URL")
    _common(play)
    play.set_defaults(func=cmd_play)

    for name, text in (
        ("pause", "pause the video"),
        ("resume", "resume the video"),
        ("stop", "stop the video and leave a neutral page"),
        ("status", "what is playing"),
    ):
        control = sub.add_parser(name, help=text)
        _common(control, replay=False)
        control.set_defaults(func=cmd_control, control=name)

    ask = sub.add_parser("ask", help="what the brain gets: route by broadcast state, envelope")
    ask.add_argument("query")
    ask.add_argument("--action", choices=ACTIONS, default="auto")
    ask.add_argument("--url")
    ask.add_argument("--broadcasting", choices=("true", "false", "none"), default="none")
    _common(ask)
    ask.set_defaults(func=cmd_ask)


def _common(parser: argparse.ArgumentParser, *, replay: bool = True) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--local", action="store_true", help="run in this process even when a service runs"
    )
    if replay:
        parser.add_argument(
            "--replay",
            metavar="NAME_OR_HAR",
            help="serve the network from a recording (offline), with its recorded options",
        )
        parser.add_argument("--hl", metavar="LANG", help="Google language (default SB_GOOGLE_HL)")
        parser.add_argument("--gl", metavar="REGION", help="Google region (default SB_GOOGLE_GL)")
        parser.add_argument(
            "--web",
            action=argparse.BooleanOptionalAction,
            help="Google's plain Web tab, udm=14 (default SB_GOOGLE_UDM14)",
        )


# -- helpers --------------------------------------------------------------------------------


def _driver(args: argparse.Namespace, settings: Settings) -> Driver:
    hooks = (replay_hook(args.replay),) if getattr(args, "replay", None) else ()
    return Driver(settings, page_hooks=hooks)


def _settings(args: argparse.Namespace, app: Any, action: str | None, arg: str) -> Settings:
    """The app's settings with `--hl/--gl/--web` on top; with `--replay`, the recording's
    own options unless those flags name them (and a note when the query differs)."""
    base: Settings = app.settings
    overrides = flag_overrides(args)
    if not getattr(args, "replay", None):
        return base.model_copy(update=overrides)
    plan = replay_plan(args.replay, base, action=action, arg=arg, overrides=overrides)
    if plan.note:
        print(f"stream-browser: note: {plan.note}", file=sys.stderr)
    return plan.settings


def refuse_off_air(settings: Settings, command: str) -> bool:
    """STREAM_BROWSER=false: a command that would drive the screen refuses, saying why."""
    if settings.stream_browser:
        return False
    print(
        f"stream-browser {command}: STREAM_BROWSER=false (broadcasting is disabled), so "
        "nothing is shown on the screen; `stream-browser ask` answers with Gemini, or set "
        "STREAM_BROWSER=true",
        file=sys.stderr,
    )
    return True


def _screen_settings(args: argparse.Namespace, app: Any, command: str, arg: str) -> Settings | int:
    """Settings for a command that drives the screen, or its exit code when it may not run
    (a bad setting: 2; broadcasting disabled: 1)."""
    try:
        settings = _settings(args, app, command, arg)
    except StreamBrowserError as exc:
        return _fail(exc)
    return EXIT_FAILED if refuse_off_air(settings, command) else settings


def _fail(exc: StreamBrowserError) -> int:
    print(f"stream-browser: {exc.kind}: {exc}", file=sys.stderr)
    return EXIT_USAGE if isinstance(exc, SettingsError) else EXIT_FAILED  # a bad setting: 2


# -- commands -------------------------------------------------------------------------------


def cmd_chrome(args: argparse.Namespace, app: Any) -> int:
    settings: Settings = app.settings
    port = args.port or settings.cdp_port
    endpoint = f"http://127.0.0.1:{port}"
    if args.stop:
        state = load_state(settings.state_dir, port)
        if state is None:
            print(f"no Chrome started by stream-browser on port {port}", file=sys.stderr)
            return EXIT_FAILED
        stop_pid(state.pid)
        for helper in (state.xvfb_pid, state.egress_pid):
            if helper:
                stop_pid(helper)
        state_file(settings.state_dir, port).unlink(missing_ok=True)
        print(f"stopped Chrome (pid {state.pid}) on {endpoint}")
        return EXIT_OK
    if not settings.stream_browser and not args.force:
        print(
            "stream-browser chrome: STREAM_BROWSER=false (broadcasting is disabled), so no "
            "broadcast Chrome is started; set STREAM_BROWSER=true, or add --force",
            file=sys.stderr,
        )
        return EXIT_FAILED
    try:
        version = cdp_version(endpoint)
        print(f"Chrome is already running: {endpoint} ({version.get('Browser', '?')})")
        return EXIT_OK
    except CdpUnreachable:
        pass
    try:
        ensure_state_dir(settings.state_dir)  # else Chrome would run with no way to stop it
        proc = launch_chrome(
            port=port,
            user_data_dir=settings.chrome_user_data_dir,
            binary=settings.chrome_binary,
            headless=args.headless,
            window=settings.window,
            allow_hosts=settings.allow_hosts,
        )
    except StreamBrowserError as exc:
        return _fail(exc)
    save_state(settings.state_dir, proc)
    print(f"broadcast Chrome started: pid {proc.pid}, CDP {proc.endpoint}")
    print(
        f"egress guard: pid {proc.egress_pid} on 127.0.0.1:{proc.egress_port} (internal "
        f"addresses refused; allowed: {', '.join(settings.allow_hosts) or 'none'})"
    )
    print(f"profile: {proc.user_data_dir}")
    if proc.xvfb_pid:
        print(
            f"on virtual display {proc.display} (Xvfb pid {proc.xvfb_pid}); watch it with a "
            f"VNC server such as `x11vnc -display {proc.display}` and a VNC viewer"
        )
    elif proc.display:
        print(f"on display {proc.display}")
    print(f"stop it with: stream-browser chrome --stop --port {port}")
    return EXIT_OK


def _empty(text: str, command: str) -> bool:
    """An empty query or URL is a usage error (exit 2), not "every provider failed"."""
    if text.strip():
        return False
    what = (
        "the URL is empty (say which page to open)"
        if command == "read"
        else ("the query is empty (say what to look for)")
    )
    print(f"stream-browser {command}: error: {what}", file=sys.stderr)
    return True


def _through_tool(
    args: argparse.Namespace,
    settings: Settings,
    action: str,
    query: str,
    *,
    url: str | None = None,
    read_top: int = 0,
    engine: str | None = None,
    broadcasting: bool | None = None,
) -> int:
    """Run one action in-process through the tool's registry and routing (what the brain
    and the service get) and print it as the service path does. With `--replay`, Gemini is
    the recorded session's stand-in: a replay never leaves the machine."""
    from search._tool import BrowseTool, default_registry
    from search.cli._remote import print_answer
    from search.recordings._runner import OfflineGemini

    driver = _driver(args, settings)
    gemini = OfflineGemini() if getattr(args, "replay", None) else None
    tool = BrowseTool(settings, driver=driver, registry=default_registry(driver, gemini))
    ctx = ToolContext(broadcasting=broadcasting)
    try:
        walk = tool.run_sync(
            query, action=action, url=url, ctx=ctx, read_top=read_top, engine=engine
        )
    except ValueError as exc:
        print(f"stream-browser: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        tool.close()
    result = walk.result
    answer = {
        "result": result.model_dump(mode="json") if result else None,
        "chain": [hop.model_dump(mode="json") for hop in walk.chain],
    }
    return print_answer(args, answer)


def _screen_action(
    args: argparse.Namespace, app: Any, action: str, arg: str, **options: Any
) -> int:
    """A command that drives the screen: its argument and settings checked, then the tool."""
    if _empty(arg, action):
        return EXIT_USAGE
    settings = _screen_settings(args, app, action, arg)
    if isinstance(settings, int):
        return settings
    return _through_tool(args, settings, action, arg, **options)


def cmd_search(args: argparse.Namespace, app: Any) -> int:
    return _screen_action(
        args, app, "search", args.query, read_top=args.read_top, engine=args.engine
    )


def cmd_read(args: argparse.Namespace, app: Any) -> int:
    return _screen_action(args, app, "read", args.url, url=args.url)


def cmd_play(args: argparse.Namespace, app: Any) -> int:
    return _screen_action(args, app, "play", args.target)


def cmd_control(args: argparse.Namespace, app: Any) -> int:
    settings: Settings = app.settings
    if args.control != "status" and refuse_off_air(settings, args.control):
        return EXIT_FAILED
    return _through_tool(args, settings, args.control, "")


def cmd_ask(args: argparse.Namespace, app: Any) -> int:
    action = None if args.action == "auto" else args.action
    controls = ("pause", "resume", "stop", "status")  # these need no query
    if action not in controls and _empty(args.query + (args.url or ""), "ask"):
        return EXIT_USAGE
    try:
        settings = _settings(args, app, action, args.url or args.query)
    except StreamBrowserError as exc:
        return _fail(exc)
    broadcasting = {"true": True, "false": False, "none": None}[args.broadcasting]
    return _through_tool(
        args, settings, args.action, args.query, url=args.url, broadcasting=broadcasting
    )


# -- doctor ---------------------------------------------------------------------------------


def _check(ok: bool, name: str, detail: str, fix: str = "") -> bool:
    line = f"{'OK  ' if ok else 'FAIL'} {name}: {detail}"
    if not ok and fix:
        line += f"\n     fix: {fix}"
    print(line)
    return ok


def _stage_checks(settings: Settings) -> bool:
    """What the audience reads: Korean, Japanese and Chinese drawn as text, not boxes (a
    FAIL); consent banners answered (a WARN when the package is missing: reads still work)."""
    fonts = check_fonts(settings.cdp_endpoint)
    fonts_ok = _check(fonts.ok, "fonts", fonts.detail, fonts.fix)
    ok, detail, fix = consent_check(settings)
    print(f"{'OK  ' if ok else 'WARN'} consent banners: {detail}")
    if fix:
        print(f"     fix: {fix}")
    return fonts_ok


def _screen_check(settings: Settings) -> None:
    """What the audience may see that this Chrome's switches and profile do not prevent
    (advisory: a WARN line, not a reason the mode cannot work)."""
    findings = screen_findings(settings.cdp_endpoint, settings.cdp_port)
    if not findings:
        print("OK   clean screen: the launch switches and profile preferences are set")
        return
    print("WARN clean screen: " + "; ".join(findings))
    print(
        "     fix: stop this Chrome and start it with `stream-browser chrome`, which sets "
        "them (see docs for the switches)"
    )


def _about() -> str:
    """Doctor's first line, what a bug report names: this version and the Python it runs on."""
    python = platform.python_version()
    return f"stream-browser {version()} (Python {python}, {sys.executable})"


def cmd_doctor(args: argparse.Namespace, app: Any) -> int:
    from gemini import find_gemini_binary, gemini_oauth_ready

    settings: Settings = app.settings  # a bad setting stops here: one line on stderr, exit 2
    print(_about())
    _check(
        True,
        "settings",
        f"STREAM_BROWSER={str(settings.stream_browser).lower()}, "
        f"GEMINI_AUTH={settings.gemini_auth}, CDP {settings.cdp_endpoint}",
    )
    needed = []
    try:
        version = cdp_version(settings.cdp_endpoint)
        tabs = [t for t in cdp_targets(settings.cdp_endpoint) if t.get("type") == "page"]
        cdp_ok = _check(
            True,
            "broadcast Chrome",
            f"{version.get('Browser', '?')} at {settings.cdp_endpoint}, {len(tabs)} tab(s)",
        )
    except CdpUnreachable as exc:
        answered = bool(exc.context.get("answered"))  # another program holds the port
        cdp_ok = _check(
            False,
            "broadcast Chrome",
            exc.message if answered else f"nothing answers at {settings.cdp_endpoint}",
            exc.hint or ""
            if answered
            else "start it with `stream-browser chrome` (or set CDP_PORT / CDP_URL)",
        )
    if cdp_ok:
        guard = egress_status(settings)
        guard_ok = _check(
            guard.ok or guard.state == "unknown", "egress guard", guard.detail, guard.hint
        )
        cdp_ok = cdp_ok and guard_ok
        cdp_ok = _stage_checks(settings) and cdp_ok
        _screen_check(settings)
    if settings.stream_browser:
        needed.append(cdp_ok)
    binary = find_gemini_binary(settings)
    cli_ok = _check(
        binary is not None,
        "Gemini CLI",
        str(binary) if binary else "not found",
        "npm i -g @google/gemini-cli, then sign in once with an interactive `gemini`",
    )
    login_ok = _check(
        gemini_oauth_ready(settings),
        "Gemini login",
        "seeded" if gemini_oauth_ready(settings) else "no oauth_creds.json found",
        "run `gemini` once interactively to sign in, or set GEMINI_OAUTH_DIR to a "
        "seeded ~/.gemini folder",
    )
    key_ok = _check(
        settings.gemini_api_key is not None,
        "Gemini API key",
        "present" if settings.gemini_api_key else "GEMINI_API_KEY is not set",
        "set GEMINI_API_KEY (in .env) to use GEMINI_AUTH=apikey",
    )
    needed.append(cli_ok and login_ok if settings.gemini_auth == "oauth" else key_ok)
    ready = all(needed)
    print(
        ("ready" if ready else "not ready") + f": the configured mode "
        f"({'browser + ' if settings.stream_browser else ''}gemini {settings.gemini_auth})"
        + (" can work" if ready else " cannot work until the FAIL lines above are fixed")
    )
    return EXIT_OK if ready else EXIT_FAILED
