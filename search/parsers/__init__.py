"""Pure parsers: page HTML or JSON in, pydantic model out. No browser, no network."""

from ._models import (
    AiOverview,
    Article,
    KnowledgePanel,
    SerpItem,
    SerpPage,
    SerpResult,
    WatchInfo,
    YoutubeResults,
    YoutubeVideo,
)
from .article import count_words, extract_article, visible_text
from .bing import clean_bing_url, detect_bing_interstitial, parse_bing
from .google import clean_google_url, detect_interstitial, parse_serp
from .youtube import (
    first_video,
    parse_duration,
    parse_watch_page,
    parse_youtube_results,
    video_id_from_url,
)

__all__ = [
    "AiOverview",
    "Article",
    "KnowledgePanel",
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
    "extract_article",
    "first_video",
    "parse_bing",
    "parse_duration",
    "parse_serp",
    "parse_watch_page",
    "parse_youtube_results",
    "video_id_from_url",
    "visible_text",
]
