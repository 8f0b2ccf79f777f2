"""`stream-browser gemini QUERY [--auth oauth|apikey] [--json]`: ask Gemini directly.

Prints the answer with numbered references (or, with --json, the ToolExecutionResult the
brain would get); on failure prints `gemini failed: <failure_kind>: <message> (<hint>)`
to stderr and exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

from browser_core import Settings
from gemini import GeminiError, ask, render_answer, to_result


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "gemini",
        help="ask Gemini grounded search (CLI login or API key)",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    parser.add_argument("query", nargs="+", help="the question (use -- before a leading '-')")
    parser.add_argument(
        "--auth", choices=("oauth", "apikey"), help="override GEMINI_AUTH for this call"
    )
    parser.add_argument("--json", action="store_true", help="print the ToolExecutionResult as JSON")
    parser.set_defaults(func=handler)


def _settings(args: argparse.Namespace, app: Any) -> Settings:
    settings: Settings = app.settings
    if args.auth:
        settings = settings.model_copy(update={"gemini_auth": args.auth})
    return settings


def handler(args: argparse.Namespace, app: Any) -> int:
    query = " ".join(args.query).strip()
    if not query:
        print("stream-browser gemini: error: the query is empty", file=sys.stderr)
        return 2
    settings = _settings(args, app)
    started = time.monotonic()
    try:
        answer = asyncio.run(ask(query, settings))
    except GeminiError as exc:
        hint = f" ({exc.hint})" if exc.hint else ""
        print(f"gemini failed: {exc.kind}: {exc.message}{hint}", file=sys.stderr)
        return 1
    if args.json:
        elapsed_ms = int((time.monotonic() - started) * 1000)
        print(to_result(answer, settings, query, elapsed_ms).model_dump_json(indent=2))
    else:
        print(render_answer(answer))
    return 0
