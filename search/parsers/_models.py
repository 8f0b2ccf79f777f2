"""The parsed shapes of a web results page (Google's or Bing's), a YouTube results or watch page
and an article.

Plain pydantic models, no behaviour: the parsers build them, providers and the CLI dump them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class SerpResult(BaseModel):
    """One organic result, ranked from 1 in page order."""

    rank: int
    title: str
    url: str
    snippet: str = ""


class KnowledgePanel(BaseModel):
    """The entity box beside (or above) the results."""

    title: str
    description: str = ""
    facts: dict[str, str] = Field(default_factory=dict)


class SerpItem(BaseModel):
    """A top-stories or video-carousel entry."""

    title: str
    url: str
    source: str = ""


class AiOverview(BaseModel):
    """Google's AI-generated overview at the top of a results page: its text in reading order
    (list items as "- item"), the same as `paragraphs`, and the sources it cites. `complete`:
    it had finished streaming when read; `collapsed`: the page shows it cut off behind
    "Show more"; `footer`: the disclaimer Google draws under a finished overview was there."""

    text: str
    paragraphs: list[str] = Field(default_factory=list)
    sources: list[SerpItem] = Field(default_factory=list)
    complete: bool = True
    collapsed: bool = False
    footer: bool = False


class ParseHealth(BaseModel):
    """Whether a results page's parse accounts for the page it came from: "ok", or "suspect"
    with the reasons (outside links in the main column that no parsed block holds, a block
    that looks like an overview but gave no text, a page with links and nothing parsed)."""

    state: Literal["ok", "suspect"] = "ok"
    reasons: list[str] = Field(default_factory=list)


class SerpPage(BaseModel):
    """A web results page; `engine` says whose ("google" | "bing"), `blocked` is "captcha" or
    "consent" when that engine showed a wall instead."""

    engine: str = "google"
    results: list[SerpResult] = Field(default_factory=list)
    # Google's AI Overview when the page has one with text; `ai_overview_state` says what the
    # overview block showed: "ready", "loading", "unavailable", "error" (None: no block).
    ai_overview: AiOverview | None = None
    ai_overview_state: str | None = None
    # On the live page: how long the search waited for the overview to finish streaming in,
    # and, when it was still loading at the end of that wait, that the answer went without it.
    ai_overview_waited_ms: int | None = None
    ai_overview_note: str | None = None
    answer: str | None = None
    knowledge_panel: KnowledgePanel | None = None
    people_also_ask: list[str] = Field(default_factory=list)
    top_stories: list[SerpItem] = Field(default_factory=list)
    videos: list[SerpItem] = Field(default_factory=list)
    # "What people are saying", "Discussions and forums": posts, never organic results.
    discussions: list[SerpItem] = Field(default_factory=list)
    short_videos: list[SerpItem] = Field(default_factory=list)
    blocked: str | None = None
    # The parse checked against its page; when "suspect", `generic` holds a reading of the
    # page that does not depend on its markup: the main column's outside links with the text
    # around them, in page order (ranked from 1).
    health: ParseHealth = Field(default_factory=ParseHealth)
    generic: list[SerpResult] = Field(default_factory=list)
    # Why the search did not read its top result (SB_SEARCH_READ=auto): no time left, say.
    read_skipped: str | None = None
    # Which of the top two results answers, when the next one was read too (its rank in
    # `chosen`; each read's url, confidence and outcome in `results`).
    read_choice: dict[str, Any] | None = None
    # When both were read: the other page's best sentences (rank, url, title, text), which go
    # with the answer.
    read_also: dict[str, Any] | None = None
    # The results a search opened that could not be read (rank, url, error): the tab went
    # back to the results page.
    read_failed: list[dict[str, Any]] = Field(default_factory=list)
    # Why the next result was not opened when the top one's page did not answer.
    read_next_skipped: str | None = None
    # The next result read without being shown while the top one was (url, confidence: None
    # when it could not tell, outcome, error, ms): it is opened only when it answers better.
    read_peek: dict[str, Any] | None = None


class YoutubeVideo(BaseModel):
    """One video of a YouTube results page; `duration` as shown ("4:13"), live has none."""

    video_id: str
    title: str
    channel: str = ""
    duration: str = ""
    duration_s: int | None = None
    url: str
    is_live: bool = False


class YoutubeResults(BaseModel):
    """The videos of a results page in page order (ads, shorts, channels, playlists left out)."""

    videos: list[YoutubeVideo] = Field(default_factory=list)


class WatchInfo(BaseModel):
    """What a watch page says about its video (from ytInitialPlayerResponse.videoDetails)."""

    video_id: str
    title: str
    channel: str = ""
    duration_s: int | None = None
    url: str
    is_live: bool = False


class Article(BaseModel):
    """The main text of a page and its metadata."""

    title: str | None = None
    author: str | None = None
    date: str | None = None
    language: str | None = None
    text: str = ""
    word_count: int = 0
