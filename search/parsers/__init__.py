"""Pure parsers: page HTML or JSON in, pydantic model out. No browser, no network.

Web results pages go through one seam: `parse_results` asks `engine_for` whose page it is
(Google's or Bing's, by address or by the page itself) and hands it to that engine's parser.
"""

from ._engine import Engine
from ._engines import ENGINES, engine_for, parse_results
from ._models import (
    AiOverview,
    Article,
    KnowledgePanel,
    ParseHealth,
    SerpItem,
    SerpPage,
    SerpResult,
    WatchInfo,
    YoutubeResults,
    YoutubeVideo,
)
from .article import count_words, extract_article, visible_text
from .bing import BING, clean_bing_url, detect_bing_interstitial, parse_bing
from .google import GOOGLE, clean_google_url, detect_interstitial, other_tab, parse_serp
from .youtube import (
    first_video,
    parse_duration,
    parse_watch_page,
    parse_youtube_results,
    video_id_from_url,
)

__all__ = [
    "BING",
    "ENGINES",
    "GOOGLE",
    "AiOverview",
    "Article",
    "Engine",
    "KnowledgePanel",
    "ParseHealth",
    "SerpItem",
    "SerpPage",
    "SerpResult",
    "WatchInfo",
    "YoutubeResults",
    "YoutubeVideo",
    "clean_bing_url",
    "clean_google_url",
    "count_words",
    "detect_bing_interstitial",
    "detect_interstitial",
    "engine_for",
    "extract_article",
    "first_video",
    "other_tab",
    "parse_bing",
    "parse_duration",
    "parse_results",
    "parse_serp",
    "parse_watch_page",
    "parse_youtube_results",
    "video_id_from_url",
    "visible_text",
]
