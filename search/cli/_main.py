"""The `stream-browser` command: one console script, one module per group of subcommands.

Each module in `COMMAND_MODULES` exposes `register(subparsers)`; every subcommand sets
`func(args, app) -> int`. Exit codes: 0 ok, 1 the action failed, 2 bad usage or settings.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from ._common import App, _Parser

COMMAND_MODULES: tuple[str, ...] = (
    "search.cli._cases",
    "search.cli._core",
    "search.cli._demo",
    "search.cli._dev",
    "search.cli._gemini",
    "search.cli._mcp",
    "search.cli._parse",
    "search.cli._serve",
)


# Every command: the module that registers it and its one-line help, so `--help` (and a
# mistyped command) imports no command module and a command imports only its own; a test
# keeps this in step with what the modules register.
COMMANDS: dict[str, tuple[str, str]] = {
    "cases": (
        "search.cli._cases",
        "results pages kept because their parse was suspect; export one as a test",
    ),
    "chrome": ("search.cli._core", "start (or stop) the local broadcast Chrome"),
    "doctor": ("search.cli._core", "check settings, Chrome, the Gemini CLI and API key"),
    "search": ("search.cli._core", "web search on the broadcast Chrome (Google, Bing)"),
    "read": ("search.cli._core", "open a page on the broadcast Chrome and read its text"),
    "play": ("search.cli._core", "play a YouTube video (query or URL) on the broadcast Chrome"),
    "pause": ("search.cli._core", "pause the video"),
    "resume": ("search.cli._core", "resume the video"),
    "stop": ("search.cli._core", "stop the video and leave a neutral page"),
    "status": ("search.cli._core", "what is playing"),
    "ask": ("search.cli._core", "what the brain gets: route by broadcast state, envelope"),
    "demo": (
        "search.cli._demo",
        "run a search and a page read on a local broadcast Chrome, offline, from recordings",
    ),
    "debug": ("search.cli._dev", "watch an action in a visible Chrome, with a trace"),
    "record": ("search.cli._dev", "record a live session as tests/recordings/NAME"),
    "gemini": ("search.cli._gemini", "ask Gemini grounded search (CLI login or API key)"),
    "mcp": (
        "search.cli._mcp",
        "serve browse/play/pause/resume/stop/status to an MCP host over stdio",
    ),
    "parse": (
        "search.cli._parse",
        "parse saved pages offline (Google or Bing results, YouTube, articles)",
    ),
    "serve": (
        "search.cli._serve",
        "run the service: one owner of the broadcast Chrome for every caller",
    ),
}


def build_parser(command: str | None = "*") -> argparse.ArgumentParser:
    """Every command (`"*"`), only the module of `command`, or (None) names and help only."""
    parser = _Parser(prog="stream-browser", description=__doc__.splitlines()[0])
    parser.add_argument("--env-file", default=".env", help="dotenv file to read (default .env)")
    parser.add_argument("--version", action=_Version, help="print the installed version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    if command is None:
        for name, (_module, text) in COMMANDS.items():
            sub.add_parser(name, help=text, add_help=False)
        return parser
    modules = COMMAND_MODULES if command == "*" else (COMMANDS[command][0],)
    for name in modules:
        importlib.import_module(name).register(sub)
    return parser


class _Version(argparse.Action):
    """argparse's `action="version"`, reading the package metadata only when asked, so every
    other command (the light client commands included) skips importing importlib.metadata:
    about 11 ms of a client command's start, measured on the shared 2-core machine."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.update(nargs=0, default=argparse.SUPPRESS)
        super().__init__(option_strings, argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_args: Any, **_kw: Any) -> None:
        from .._version import version

        print(f"{parser.prog} {version()}")
        parser.exit()


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named in `argv` (None for `--help`, `--version` or none at all)."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--env-file":
            skip = True
        elif arg in ("-h", "--help", "--version"):
            return None
        elif not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


def _not_utf8(argv: Sequence[str]) -> int | None:
    """The position of the first argument that is not valid UTF-8 (Python keeps such bytes
    as lone surrogates, which would crash the first print), or None."""
    for position, arg in enumerate(argv, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return position
    return None


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # The reader went away (`stream-browser doctor | head -1`): nothing is left to say, and
        # the interpreter's last flush must not print a traceback either.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # as a shell reports a process ended by SIGPIPE


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    bad = _not_utf8(argv)
    if bad is not None:
        print(
            f"stream-browser: error: argument {bad} is not valid UTF-8 text; "
            "pass it UTF-8 encoded (check the terminal's locale) (see --help)",
            file=sys.stderr,
        )
        return 2
    command = _command_of(argv)
    if command is not None and "--local" not in argv:
        from search.cli._remote import REMOTE_COMMANDS, run_remote

        remote = run_remote(argv) if command in REMOTE_COMMANDS else None
        if remote is not None:
            return remote
    args = build_parser(command).parse_args(argv)
    app = App(env_file=args.env_file)
    from browser_core import SettingsError  # loaded by the command's module already

    try:
        return int(args.func(args, app))
    except SettingsError as exc:
        print(f"stream-browser: configuration error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
