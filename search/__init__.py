"""The brain-facing tool: `browse_and_search`, its routing, providers, parsers and CLI.

Names are imported on first use (PEP 562), so `import search.client` (the standard-library
client) and `stream-browser --help` never load playwright, trafilatura or lxml.
`search.__version__` is the installed version (`unknown` in a source tree never installed).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from browser_core import ToolExecutionResult

    from ._declaration import TOOL_DECLARATION
    from ._routing import ROUTES, Registry, mode_for
    from ._tool import BrowseTool, abrowse_and_search, browse_and_search, configure
    from ._types import Provider, Request, ToolContext

    __version__: str

# public name -> the module that defines it
_HOMES: dict[str, str] = {
    "ROUTES": "search._routing",
    "TOOL_DECLARATION": "search._declaration",
    "BrowseTool": "search._tool",
    "Provider": "search._types",
    "Registry": "search._routing",
    "Request": "search._types",
    "ToolContext": "search._types",
    "ToolExecutionResult": "browser_core",
    "abrowse_and_search": "search._tool",
    "browse_and_search": "search._tool",
    "configure": "search._tool",
    "mode_for": "search._routing",
}

__all__ = [
    "ROUTES",
    "TOOL_DECLARATION",
    "BrowseTool",
    "Provider",
    "Registry",
    "Request",
    "ToolContext",
    "ToolExecutionResult",
    "abrowse_and_search",
    "browse_and_search",
    "configure",
    "mode_for",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from ._version import version

        return version()
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'search' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
