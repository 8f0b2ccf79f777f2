"""`stream-browser cases list|show|export`: the results pages kept because their parse was
suspect (`SB_STATE_DIR/cases`), and one turned into a recording (docs/google.md, "When Google
changes its page"). Reads the state folder on this machine; no Chrome is needed."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "cases", help="results pages kept because their parse was suspect; export one as a test"
    )
    verbs = parser.add_subparsers(dest="cases_verb", metavar="VERB")
    verbs.required = True
    listing = verbs.add_parser("list", help="the kept cases, newest first")
    listing.add_argument("--json", action="store_true", help="one JSON object per case")
    listing.set_defaults(func=_list)
    show = verbs.add_parser("show", help="a case's record and its parse, as JSON")
    show.add_argument("case", metavar="CASE", help="a name from `cases list`")
    show.set_defaults(func=_show)
    export = verbs.add_parser(
        "export",
        help="write a case as a recording (session.har, action.json, README.md); "
        "`make case` also writes its expected.json by replaying it",
    )
    export.add_argument("case", metavar="CASE", help="a name from `cases list`")
    export.add_argument("--name", required=True, help="the recording's name (a folder name)")
    export.add_argument(
        "--to", default=None, help="the recordings folder (default: tests/recordings)"
    )
    export.set_defaults(func=_export)


def _store(app: Any) -> Any:
    from search._cases import CaseStore

    return CaseStore.for_settings(app.settings)


def _list(args: argparse.Namespace, app: Any) -> int:
    cases = _store(app).list()
    for case in cases:
        if args.json:
            print(json.dumps(case, ensure_ascii=False))
            continue
        reasons = "; ".join((case.get("health") or {}).get("reasons", [])) or "suspect"
        print(f"{case['name']}  {case['engine']}  {case['query']!r}  {case['at']}  {reasons}")
    if not cases and not args.json:
        print("no cases kept (a results page is kept when its parse is suspect)")
    return 0


def _show(args: argparse.Namespace, app: Any) -> int:
    from browser_core import StreamBrowserError

    try:
        case = _store(app).show(args.case)
    except StreamBrowserError as exc:
        return _failed(exc)
    print(json.dumps(case, ensure_ascii=False, indent=1))
    return 0


def _export(args: argparse.Namespace, app: Any) -> int:
    from browser_core import StreamBrowserError
    from browser_core.recording import RECORDINGS_DIR
    from search._cases import export_case

    name = str(args.name)
    if not name or "/" in name or name.startswith((".", "_")):
        print("stream-browser: error: --name must be a plain folder name", file=sys.stderr)
        return 2
    root = Path(args.to) if args.to else RECORDINGS_DIR
    try:
        folder = export_case(_store(app), args.case, root / name)
    except StreamBrowserError as exc:
        return _failed(exc)
    print(
        f"{folder}: session.har, action.json, README.md written; write its expected.json with "
        f"`scripts/update_recordings.py {name}` (`make case` does both)"
    )
    return 0


def _failed(exc: Any) -> int:
    hint = f" ({exc.hint})" if getattr(exc, "hint", None) else ""
    print(f"stream-browser: {exc.message}{hint}", file=sys.stderr)
    return 1
