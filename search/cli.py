"""The `stream-browser` command: one console script, one module per group of subcommands.

Each module in `COMMAND_MODULES` exposes `register(subparsers)`; every subcommand sets
`func(args, app) -> int`. Exit codes: 0 ok, 1 the action failed, 2 bad usage or settings.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from browser_core import Settings, SettingsError, configure_logging, load_settings

COMMAND_MODULES: tuple[str, ...] = (
    "search._cli_core",
    "search._cli_demo",
    "search._cli_dev",
    "search._cli_gemini",
    "search._cli_mcp",
    "search._cli_parse",
    "search._cli_serve",
)


@dataclass
class App:
    """What a subcommand gets besides its arguments: settings, loaded on first use."""

    env_file: str | None = ".env"
    overrides: dict[str, Any] = field(default_factory=dict)
    _settings: Settings | None = None

    @property
    def settings(self) -> Settings:
        from browser_core import configure_logging, load_settings

        if self._settings is None:
            self._settings = load_settings(self.env_file, **self.overrides)
            settings = self._settings
            configure_logging(
                settings.log_level, settings.log_format, secrets=settings.secret_values()
            )
        return self._settings


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # exit code 2 with a one-line reason and the fix
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="stream-browser", description=__doc__.splitlines()[0])
    parser.add_argument("--env-file", default=".env", help="dotenv file to read (default .env)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


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
    argv = list(sys.argv[1:] if argv is None else argv)
    bad = _not_utf8(argv)
    if bad is not None:
        print(
            f"stream-browser: error: argument {bad} is not valid UTF-8 text; "
            "pass it UTF-8 encoded (check the terminal's locale) (see --help)",
            file=sys.stderr,
        )
        return 2
    parser = build_parser()
    args = parser.parse_args(argv)
    app = App(env_file=args.env_file)
    try:
        return int(args.func(args, app))
    except SettingsError as exc:
        print(f"stream-browser: configuration error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
