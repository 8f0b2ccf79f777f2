"""One seam for the web search engines: which engine drew a results page, and its parser.

The engines are records (`Engine`) in an ordered tuple, as httpx keeps its transports behind
one interface. `engine_for` picks by the page's address, else by the markers the page carries;
a page no engine claims is Google's (the engine this project searched first).
"""

from __future__ import annotations

from ._engine import Engine
from ._models import SerpPage
from .bing import BING
from .google import GOOGLE

# Asked in this order, by address first, then by markers.
ENGINES: tuple[Engine, ...] = (GOOGLE, BING)


def engine_for(html: str, url: str | None = None) -> Engine:
    """The engine whose results page this is: by address, else by the page's markers."""
    for engine in ENGINES:
        if engine.serves(url):
            return engine
    for engine in ENGINES:
        if engine.drew(html):
            return engine
    return GOOGLE


def parse_results(html: str, url: str | None = None) -> SerpPage:
    """Parse a results page of any engine this project knows, found by `engine_for`."""
    return engine_for(html, url).parse(html, url)
