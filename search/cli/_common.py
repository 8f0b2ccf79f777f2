"""What every command module shares: the settings loaded on first use, number flags that are
usage errors when out of range, and the parser that exits 2 with the fix."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used, so `--help` and client commands stay light
    from browser_core import Settings


class App:
    """What a subcommand gets besides its arguments: settings, loaded on first use.

    A plain class, not a dataclass: `dataclasses` imports `inspect` (and `ast`, `dis`), a few
    milliseconds of every command's start, the light client commands' included."""

    def __init__(
        self, env_file: str | None = ".env", overrides: dict[str, Any] | None = None
    ) -> None:
        self.env_file = env_file
        self.overrides: dict[str, Any] = dict(overrides or {})
        self._settings: Settings | None = None

    def __repr__(self) -> str:
        return f"App(env_file={self.env_file!r}, overrides={self.overrides!r})"

    @property
    def settings(self) -> Settings:
        from browser_core import configure_logging, load_settings

        if self._settings is None:
            self._settings = load_settings(self.env_file, **self.overrides)
            settings = self._settings
            configure_logging(
                settings.log_level,
                settings.log_format,
                secrets=settings.secret_values(),
                instance=settings.instance,
            )
        return self._settings


def int_in(low: int, high: int, what: str = "a whole number") -> Any:
    """An argparse `type`: a whole number `low`-`high`, else a usage error (exit 2) saying so
    (settings are checked when loaded; a flag must be too, not fail later or crash)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what} {low}-{high}")
        return value

    parse.__name__ = "number"  # argparse's own messages name the type
    return parse


PORT = int_in(1, 65535, "a port number")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # exit code 2 with a one-line reason and the fix
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")
