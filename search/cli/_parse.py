"""`stream-browser parse serp|youtube|article FILE...`: run the offline parsers on saved pages
(a results page goes to Google's or Bing's parser by what the page itself shows).

One JSON object per input file per line, in order. A file that cannot be read or is not a page
gives {"file", "error"} on its line and the others still parse; exit 1 if any failed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import structlog

from browser_core import configure_logging
from search.parsers import extract_article, parse_results, parse_youtube_results

__all__ = ["register"]

_GZIP_MAGIC = b"\x1f\x8b"
_Parse = Callable[[str, argparse.Namespace], dict[str, Any]]
_MAX_BYTES = 64 * 1024 * 1024


class _InputError(Exception):
    """A file that is not a readable page; the message says what to do."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "parse", help="parse saved pages offline (Google or Bing results, YouTube, articles)"
    )
    kinds = parser.add_subparsers(dest="parse_kind", metavar="KIND")
    kinds.required = True
    serp = kinds.add_parser(
        "serp", help="Google or Bing result pages (told apart by the page) -> results, answer, PAA"
    )
    serp.add_argument("files", nargs="+", metavar="FILE", help="saved .html or .html.gz")
    serp.set_defaults(func=_handler(_serp))
    youtube = kinds.add_parser("youtube", help="YouTube results pages or InnerTube JSON -> videos")
    youtube.add_argument("files", nargs="+", metavar="FILE", help="saved .html/.json(.gz)")
    youtube.set_defaults(func=_handler(_youtube))
    article = kinds.add_parser("article", help="any page -> main text (trafilatura)")
    article.add_argument("files", nargs="+", metavar="FILE", help="saved .html or .html.gz")
    article.add_argument("--url", default=None, help="the page's URL (helps metadata)")
    article.set_defaults(func=_handler(_article))


@contextmanager
def _logs_to_stderr() -> Iterator[None]:
    """Warnings only, on stderr, so stdout stays pure JSON lines; the old set-up comes back."""
    was_configured = structlog.is_configured()
    previous = structlog.get_config()
    configure_logging("warning")
    try:
        yield
    finally:
        if was_configured:
            structlog.configure(**previous)
        else:
            structlog.reset_defaults()


def _handler(parse: _Parse) -> Any:
    def handle(args: argparse.Namespace, app: Any) -> int:  # app unused: no settings needed
        with _logs_to_stderr():
            return _run(parse, args)

    return handle


def _run(parse: _Parse, args: argparse.Namespace) -> int:
    failed = 0
    for name in args.files:
        try:
            record = {"file": name, **parse(read_page(Path(name)), args)}
        except _InputError as exc:
            record = {"file": name, "error": str(exc)}
            failed += 1
        sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 1 if failed else 0


def read_page(path: Path) -> str:
    """The text of a saved page (gzip detected by magic bytes), or a clear _InputError."""
    if not path.exists():
        raise _InputError(f"no such file: {path}; check the path (relative to the current folder)")
    if path.is_dir():
        raise _InputError(f"{path} is a directory; pass the saved page files inside it")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _InputError(f"cannot read {path}: {exc.strerror}; check its permissions") from exc
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            message = f"{path} is a damaged gzip file ({exc}); save the page again"
            raise _InputError(message) from exc
    if len(data) > _MAX_BYTES:
        raise _InputError(f"{path} is larger than 64 MB; this is not a saved web page")
    if b"\x00" in data[:4096]:
        raise _InputError(f"{path} is a binary file, not HTML or JSON; pass a saved .html page")
    text = data.decode("utf-8", errors="replace")
    if not text.strip() or text.lstrip()[:1] not in ("<", "{", "["):
        raise _InputError(
            f"{path} is not HTML or JSON (it does not start with '<' or '{{'); "
            "pass the page as saved by the browser"
        )
    return text


def _serp(text: str, _args: argparse.Namespace) -> dict[str, Any]:
    page = parse_results(text)  # Google's or Bing's, told by the page itself
    return page.model_dump(
        include={
            "engine",
            "results",
            "ai_overview",
            "ai_overview_state",
            "answer",
            "knowledge_panel",
            "people_also_ask",
            "top_stories",
            "videos",
            "discussions",
            "short_videos",
            "blocked",
            # The parse checked against its page; `generic` is filled when it is "suspect".
            "health",
            "generic",
        }
    )


def _youtube(text: str, _args: argparse.Namespace) -> dict[str, Any]:
    fields = {"video_id", "title", "channel", "duration", "url"}
    return {"videos": [v.model_dump(include=fields) for v in parse_youtube_results(text).videos]}


def _article(text: str, args: argparse.Namespace) -> dict[str, Any]:
    article = extract_article(text, url=args.url)
    return {"title": article.title, "text": article.text, "word_count": article.word_count}
