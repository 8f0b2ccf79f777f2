"""The providers behind `browse_and_search`: browser ones on the broadcast tab, and Gemini."""

from ._engine import LiveEngine
from ._engine_bing import BING_LIVE
from ._engine_google import GOOGLE_LIVE
from .gemini import GeminiProvider
from .google import BingProvider, GoogleProvider, SearchProvider
from .read import ReadProvider
from .youtube import YoutubeProvider

# The search engines the broadcast tab searches, by name.
LIVE_ENGINES: dict[str, LiveEngine] = {engine.name: engine for engine in (GOOGLE_LIVE, BING_LIVE)}

__all__ = [
    "LIVE_ENGINES",
    "BingProvider",
    "GeminiProvider",
    "GoogleProvider",
    "ReadProvider",
    "SearchProvider",
    "YoutubeProvider",
]
