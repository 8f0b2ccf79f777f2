"""What a web search engine is to the parsers: one record per engine (its name, the hosts of
its results pages, the markers only its pages carry, its parser, its wall detector), built by
the engine's package and listed, in order, in `_engines`."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ._models import SerpPage
from ._urls import host_path

# How far into a page its markers are looked for: the results list opens well inside this.
_HEAD = 400_000


@dataclass(frozen=True)
class Engine:
    """A web search engine as the parsers see it; `parse` and `blocked` take (html, url)."""

    name: str
    host: re.Pattern[str]
    markers: re.Pattern[str]
    parse: Callable[[str, str | None], SerpPage]
    blocked: Callable[[str, str | None], str | None]

    def serves(self, url: str | None) -> bool:
        """True when `url` is on one of this engine's hosts."""
        host, _ = host_path(url)
        return bool(host) and bool(self.host.search(host))

    def drew(self, html: str) -> bool:
        """True when the page carries a marker only this engine's pages carry."""
        return bool(self.markers.search(html, 0, _HEAD))
