"""The one version of stream-browser: the installed distribution's metadata, which the
install took from `pyproject.toml`. Every face shows this value (`--version`, `doctor`,
`/healthz`, `/v1/status`, the MCP `serverInfo`); nothing else writes a version down.

A source tree run without installing it (`PYTHONPATH=. python -m search`) has no metadata:
the version is then `unknown`, never a guess that could be stale.
"""

from __future__ import annotations

import functools
import importlib.metadata

DISTRIBUTION = "stream-browser"
UNKNOWN = "unknown"


@functools.cache
def version() -> str:
    """The installed version (pyproject's, such as `0.2.0`), or `unknown` when the package
    is not installed."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return UNKNOWN
