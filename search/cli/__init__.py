"""The `stream-browser` command: one console script, one module per group of subcommands.

`_main` parses and dispatches (a client command goes to a running service first, `_remote`);
`_core` (chrome, doctor, search, read, play, ask...), `_demo`, `_dev` (debug, record), `_gemini`,
`_mcp`, `_parse` and `_serve` each register a group; `_common` is what they share.
"""

from ._common import PORT, App, int_in
from ._main import COMMAND_MODULES, COMMANDS, build_parser, main

__all__ = ["COMMANDS", "COMMAND_MODULES", "PORT", "App", "build_parser", "int_in", "main"]
