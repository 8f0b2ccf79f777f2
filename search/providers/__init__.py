"""The providers behind `browse_and_search`: browser ones on the broadcast tab, and Gemini."""

from .gemini import GeminiProvider
from .google import BingProvider, GoogleProvider, SearchProvider
from .read import ReadProvider
from .youtube import YoutubeProvider

__all__ = [
    "BingProvider",
    "GeminiProvider",
    "GoogleProvider",
    "ReadProvider",
    "SearchProvider",
    "YoutubeProvider",
]
