"""Turn a saved real page into a recorded session: tests/recordings/NAME/.

The page is served at its real URL inside a scratch headless Chromium (nothing reaches the
internet), the action runs through the real browser path while the HAR is recorded exactly as
`stream-browser record` does, and expected.json is what the action outputs when the new
recording is replayed. Examples:

  make_recording.py google-crow-names search "crow names" --page ../shared/fixtures/serp/...gz
  make_recording.py google-captcha search "coffee" --page recaptcha.html --status 429 \
      --url "https://www.google.com/sorry/index?continue=..."   # the search URL redirects there
  make_recording.py bing-x search "query" --page bing.html.gz --option search_engines=bing
  make_recording.py article-x read https://example.org/a --page article.html.gz
  make_recording.py youtube-play play "query" --page results.html.gz \
      --watch-page tests/pages/yt-watch.html --video tests/pages/test-video.webm
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from playwright.async_api import Page, Route

from browser_core import (
    Driver,
    Settings,
    StreamBrowserError,
    build_settings,
    configure_logging,
    launch_chrome,
)
from browser_core import stop_pid as stop_process
from browser_core.recording import RECORDINGS_DIR, SessionRecorder, document_entry
from browser_core.testing import free_port
from search.recordings import (
    ACTION_OPTIONS,
    ACTIONS,
    CASE_SETTINGS,
    case_options,
    compare,
    error_payload,
    run_action,
    run_case,
    write_case,
    write_expected,
)

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".webm": "video/webm",
    ".mp4": "video/mp4",
    ".json": "application/json",
}
_ENV_PREFIXES = ("STREAM_BROWSER", "CDP_", "GEMINI_", "GOOGLE_", "SB_")


@dataclass
class Reply:
    body: bytes
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)


def read_saved(path: Path) -> bytes:
    """A saved page's bytes (gunzipped when it is a .gz)."""
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def content_type(path: Path) -> str:
    suffixes = [s for s in path.suffixes if s != ".gz"]
    return _TYPES.get(suffixes[-1] if suffixes else "", "text/html; charset=utf-8")


def provenance(page: Path) -> str:
    """The manifest line of a file from the shared fixtures, as one readable sentence."""
    for parent in page.resolve().parents:
        manifest = parent / "manifest.jsonl"
        if not manifest.is_file():
            continue
        relative = str(page.resolve().relative_to(parent))
        for line in manifest.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            if item.get("file") == relative:
                return (
                    f"saved page {relative} from {item['repo']}@{item['commit'][:12]} "
                    f"`{item['path']}` ({item['license']}; captured {item['captured']}); "
                    f"{item.get('contents', '')[:200]}"
                )
    return f"saved page {page.name}"


def describe_source(args: argparse.Namespace) -> str:
    """The README's provenance line: the page's origin and how it was served."""
    text = args.source or provenance(Path(args.page))
    if args.url:
        text += (
            f". Served at {args.url} (HTTP {args.status}), reached by a redirect from the "
            "action's URL; that hop's HAR entry was written by scripts/make_recording.py"
        )
    if args.watch_page:
        text += (
            f". The watch page is the local stand-in {args.watch_page}"
            + (f" playing {args.video}" if args.video else "")
            + ", served at the first video's real watch URL"
        )
    return text + ". Made offline with scripts/make_recording.py."


# -- the action's URL and what is served ------------------------------------------------------


def action_url(action: str, arg: str, settings: Settings) -> str:
    """The URL the action opens first (what the saved page is served at by default)."""
    if action == "search":  # the first engine's results page
        from search.providers import LIVE_ENGINES

        return LIVE_ENGINES[settings.search_engines[0]].results_url(arg, settings)
    if action == "play":
        from search.parsers.youtube import video_id_from_url
        from search.providers.youtube import results_url

        video = video_id_from_url(arg)
        return f"https://www.youtube.com/watch?v={video}" if video else results_url(arg)
    return arg


def first_video_id(results_html: bytes) -> str:
    from search.parsers.youtube import first_video, parse_youtube_results

    video = first_video(parse_youtube_results(results_html.decode("utf-8", "replace")))
    if video is None:
        raise SystemExit("the YouTube results page has no playable video for the watch page")
    return video.video_id


def build_routes(args: argparse.Namespace, settings: Settings) -> dict[str, Reply]:
    """URL -> reply: the saved page at its URL, a redirect to it, the watch page and video."""
    first = action_url(args.action, args.arg, settings)
    page_url = args.url or first
    body = read_saved(Path(args.page))
    routes = {page_url: Reply(body, args.status, content_type(Path(args.page)))}
    if page_url != first:
        routes[first] = Reply(b"", 302, "text/html", {"location": page_url})
    if args.watch_page:
        video_id = first_video_id(body)
        watch_url = f"https://www.youtube.com/watch?v={video_id}"
        html = Path(args.watch_page).read_text(encoding="utf-8")
        html = html.replace("VIDEO_ID", video_id).replace("AD_CLASS", "")
        routes[watch_url] = Reply(html.encode())
        if args.video:
            video = Path(args.video)
            routes[urljoin(watch_url, "/" + video.name)] = Reply(
                video.read_bytes(), 200, content_type(video)
            )
    for url, path in args.extra or []:
        routes[url] = Reply(read_saved(Path(path)), 200, content_type(Path(path)))
    return routes


def serve_hook(routes: dict[str, Reply]) -> Any:
    """A page hook: known URLs get their saved reply; every other request is aborted."""

    async def on_route(route: Route) -> None:
        reply = routes.get(route.request.url)
        if reply is None:
            await route.abort()
            return
        await route.fulfill(
            status=reply.status,
            body=reply.body,
            headers={"content-type": reply.content_type, **reply.headers},
        )

    async def hook(page: Page) -> None:
        await page.route("**/*", on_route)

    return hook


# -- recording ---------------------------------------------------------------------------------


async def record(args: argparse.Namespace, settings: Settings, folder: Path) -> dict[str, Any]:
    routes = build_routes(args, settings)
    har = folder / "session.har"
    recorder = SessionRecorder(har_path=har, slim=True)
    driver = Driver(settings, page_hooks=(serve_hook(routes), recorder.hook))
    try:
        try:
            payload = (
                await run_action(driver, args.action, args.arg, settings, read_top=args.read_top)
            ).payload
        except StreamBrowserError as exc:
            payload = error_payload(exc)
        await recorder.stop()
        await driver.close_owned_tab()
    finally:
        await driver.close()
    if args.url and args.url != action_url(args.action, args.arg, settings):
        add_entry(har, args.url, routes[args.url])
    return payload


def add_entry(har: Path, url: str, reply: Reply) -> None:
    """Append the page a recorded redirect leads to.

    `route.fulfill` cannot serve the request that follows a fulfilled 302 (Chromium sends it
    to the network, where it fails), so the hop's entry is written directly; `route_from_har`
    replays the redirect chain like a real one.
    """
    data = json.loads(har.read_text(encoding="utf-8"))
    data["log"]["entries"].append(document_entry(url, reply.status, reply.content_type, reply.body))
    har.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def parse_options(pairs: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        key, _, raw = pair.partition("=")
        if key not in CASE_SETTINGS:
            raise SystemExit(f"--option {key}: not one of {', '.join(CASE_SETTINGS)}")
        options[key] = json.loads(raw) if raw in ("true", "false") or raw.isdigit() else raw
        if key == "search_engines":  # google,bing: a list in action.json
            options[key] = [name.strip() for name in raw.split(",") if name.strip()]
    return options


def scratch_settings(port: int, state_dir: str, options: dict[str, Any]) -> Settings:
    """Settings that do not depend on this machine's environment or .env."""
    for name in list(os.environ):
        if name.startswith(_ENV_PREFIXES):
            del os.environ[name]
    pinned = {k: v for k, v in options.items() if k in CASE_SETTINGS}
    return build_settings(
        cdp_port=port, state_dir=state_dir, allow_hosts=("127.0.0.1",), settle_ms=500, cache_ttl_s=0
    ).model_copy(update=pinned)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    configure_logging("info", fmt="console")
    folder = Path(args.dir) / args.name
    if folder.exists() and not args.force:
        raise SystemExit(f"{folder} exists: pass --force to replace it")
    shutil.rmtree(folder, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="make-recording-") as tmp:
        port = free_port()
        chrome = launch_chrome(port=port, user_data_dir=f"{tmp}/profile", headless=True)
        try:
            settings = scratch_settings(port, f"{tmp}/state", parse_options(args.option or []))
            options = case_options(settings, args.action, args.read_top, arg=args.arg)
            options |= parse_options(args.option or [])
            try:
                live = asyncio.run(record(args, settings, folder))
            except StreamBrowserError as exc:  # a body the recording could not keep
                shutil.rmtree(folder, ignore_errors=True)
                print(f"{folder.name}: {exc}", file=sys.stderr)
                return 1
            if args.url and args.url != action_url(args.action, args.arg, settings):
                live = {}  # the recording run could not follow the redirect (see add_entry)
            case = write_case(folder, args.action, args.arg, options, describe_source(args))
            replayed = asyncio.run(run_case(case, settings, close_tab=True))
        finally:
            stop_process(chrome.pid)
    write_expected(case, replayed)
    return report(case, live, replayed)


def report(case: Any, live: dict[str, Any], replayed: dict[str, Any]) -> int:
    size = case.har.stat().st_size // 1024
    print(f"{case.name}: session.har {size} KB, expected.json written from the replay")
    differences = compare(case.action, live, replayed) if live else []
    if differences:
        print(
            "warning: the replay differs from the recording run:\n" + "\n".join(differences),
            file=sys.stderr,
        )
        return 1
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[1:]),
    )
    p.add_argument("name", help="the folder name under tests/recordings/")
    p.add_argument("action", choices=ACTIONS)
    p.add_argument("arg", help="the query, URL or video, as a user would give it")
    p.add_argument("--page", required=True, help="the saved page (.html or .html.gz)")
    p.add_argument(
        "--url",
        help="the page's real URL when it is not the action's own URL "
        "(the action's URL then redirects there, as Google does to /sorry/)",
    )
    p.add_argument("--status", type=int, default=200, help="HTTP status of the saved page")
    p.add_argument("--watch-page", help="play: a watch page served for the first video found")
    p.add_argument("--video", help="play: the video file the watch page plays")
    p.add_argument(
        "--extra",
        nargs=2,
        action="append",
        metavar=("URL", "FILE"),
        help="serve another saved file at URL (repeatable)",
    )
    p.add_argument(
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help=f"pin a setting or option: {', '.join(CASE_SETTINGS + ACTION_OPTIONS)}",
    )
    p.add_argument("--read-top", type=int, default=0, help="search: also read the top N")
    p.add_argument("--source", help="provenance text (default: from the fixtures manifest)")
    p.add_argument("--dir", default=str(RECORDINGS_DIR), help="recordings folder")
    p.add_argument("--force", action="store_true", help="replace an existing recording")
    return p


if __name__ == "__main__":
    sys.exit(main())
