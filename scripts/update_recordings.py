"""Re-run every recording (tests/recordings/*) through the real browser with replay and rewrite
its expected.json; print what changed, on the same stable fields the regression tests compare.

Run it after an intended change to a parser or provider (`make update-recordings`), read the
summary, and commit the new expected.json files with the change. It needs no internet: a
scratch headless Chromium replays each session.har.

  update_recordings.py                 # every recording
  update_recordings.py google-crow-names-en article-slashgear-vw
  update_recordings.py --check         # only report; exit 1 when an expected.json is stale
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from browser_core import (
    Settings,
    StreamBrowserError,
    build_settings,
    configure_logging,
    launch_chrome,
    stop_pid,
)
from browser_core.recording import RECORDINGS_DIR
from browser_core.testing import free_port
from search.recordings import (
    Case,
    case_folders,
    load_case,
    run_case,
    summarize_change,
    write_expected,
)

_ENV_PREFIXES = ("STREAM_BROWSER", "CDP_", "GEMINI_", "GOOGLE_", "SB_")


def scratch_settings(port: int, state_dir: str) -> Settings:
    """Settings that do not depend on this machine's environment or .env."""
    for name in list(os.environ):
        if name.startswith(_ENV_PREFIXES):
            del os.environ[name]
    return build_settings(
        cdp_port=port, state_dir=state_dir, allow_hosts=("127.0.0.1",), settle_ms=500, cache_ttl_s=0
    )


def selected(root: Path, names: list[str]) -> list[Path]:
    folders = case_folders(root)
    if not names:
        return folders
    known = {p.name: p for p in folders}
    missing = [n for n in names if n not in known]
    if missing:
        raise SystemExit(
            f"no recording named {', '.join(missing)} in {root} "
            f"(known: {', '.join(known) or 'none'})"
        )
    return [known[n] for n in names]


def update_one(case: Case, settings: Settings, check: bool) -> str:
    old: dict[str, Any] = case.expected() if case.expected_path.is_file() else {}
    new = asyncio.run(run_case(case, settings, close_tab=True))
    summary = summarize_change(case.action, old, new)
    if not check and summary.startswith(("new", "changed")):
        write_expected(case, new)
    return summary


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    configure_logging("warning", fmt="console")
    folders = selected(Path(args.dir), args.names)
    counts = {"stale": 0, "broken": 0}
    with tempfile.TemporaryDirectory(prefix="update-recordings-") as tmp:
        port = free_port()
        chrome = launch_chrome(port=port, user_data_dir=f"{tmp}/profile", headless=True)
        try:
            settings = scratch_settings(port, f"{tmp}/state")
            for folder in folders:
                try:
                    summary = update_one(load_case(folder), settings, args.check)
                except StreamBrowserError as exc:
                    counts["broken"] += 1
                    print(f"{folder.name}: broken: {exc}")
                    continue
                counts["stale"] += summary.startswith(("changed", "new"))
                print(f"{folder.name}: {summary}")
        finally:
            stop_pid(chrome.pid)
    verb = "differ from" if args.check else "rewritten from"
    print(
        f"{len(folders)} recordings, {counts['stale']} expected.json {verb} the replay, "
        f"{counts['broken']} broken"
    )
    return 1 if counts["broken"] or (args.check and counts["stale"]) else 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[1:]),
    )
    p.add_argument("names", nargs="*", help="recordings to update (default: all)")
    p.add_argument("--dir", default=str(RECORDINGS_DIR), help="recordings folder")
    p.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 when an expected.json differs from its replay",
    )
    return p


if __name__ == "__main__":
    sys.exit(main())
