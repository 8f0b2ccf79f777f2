"""The brain-facing tool: `browse_and_search`, its routing, providers, parsers and CLI."""

from browser_core import ToolExecutionResult

from ._declaration import TOOL_DECLARATION
from ._routing import ROUTES, Registry, mode_for
from ._tool import BrowseTool, abrowse_and_search, browse_and_search, configure
from ._types import Provider, Request, ToolContext

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
