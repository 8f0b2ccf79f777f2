"""YouTube results and watch pages in, videos out (pure, offline).

Results come from the page's `ytInitialData` (or InnerTube JSON itself, continuations too),
walked in order to `videoRenderer` items; ads, shorts shelves, channels, playlists and mixes are
left out, live streams are marked. Rendered DOMs (after scrolling) and the 2019 static layout
are read from the markup. The JSON is cut out with `raw_decode`, never with a regex.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import lxml.html
import structlog
from lxml.etree import ParserError, _Element

from ._models import WatchInfo, YoutubeResults, YoutubeVideo

__all__ = [
    "first_video",
    "parse_duration",
    "parse_watch_page",
    "parse_youtube_results",
    "video_id_from_url",
]

log = structlog.get_logger(__name__)

_ID = re.compile(r"^[A-Za-z0-9_-]{11}$")
_YOUTUBE_HOSTS = frozenset(
    {
        "youtube.com",
        "www.youtube.com",
        "m.youtube.com",
        "music.youtube.com",
        "youtube-nocookie.com",
        "www.youtube-nocookie.com",
        "gaming.youtube.com",
    }
)
_INITIAL_DATA = ("var ytInitialData =", 'window["ytInitialData"] =', "ytInitialData =")
_PLAYER_RESPONSE = (
    "var ytInitialPlayerResponse =",
    'window["ytInitialPlayerResponse"] =',
    "ytInitialPlayerResponse =",
)
# Renderers whose insides are never organic search results.
_SKIPPED = frozenset(
    {
        "promotedVideoRenderer",
        "adSlotRenderer",
        "searchPyvRenderer",
        "promotedSparklesWebRenderer",
        "compactPromotedItemRenderer",
        "reelShelfRenderer",
        "reelItemRenderer",
        "shortsLockupViewModel",
        "channelRenderer",
        "playlistRenderer",
        "radioRenderer",
        "richShelfRenderer",
        "shelfRenderer",
        "horizontalCardListRenderer",
        "movieRenderer",
        "gridMovieRenderer",
        "backgroundPromoRenderer",
        "secondaryContents",
        "header",
        "topbar",
        "responseContext",
        "frameworkUpdates",
        "lockupViewModel",
    }
)
_LIVE_WORDS = ("LIVE", "LIVE NOW", "EN DIRECT", "EN VIVO", "AO VIVO", "DIRETTA", "ライブ")
_DOM_SKIP = {
    "ytd-ad-slot-renderer",
    "ytd-reel-shelf-renderer",
    "ytd-shelf-renderer",
    "ytd-promoted-video-renderer",
    "ytd-horizontal-card-list-renderer",
}
_DOM_DURATION = (
    './/*[contains(@class,"video-time")] | .//ytd-thumbnail-overlay-time-status-renderer'
)
_DOM_CHANNEL = './/ytd-channel-name//a | .//*[contains(@class,"yt-lockup-byline")]//a'
_DOM_LIVE = (
    './/*[contains(@class,"live-now")] | .//*[contains(@class,"yt-badge-live")]'
    ' | .//*[contains(@class,"thumbnail-live")]'
)


def video_id_from_url(url: str) -> str | None:
    """The 11-character id of a YouTube video URL; None for anything else."""
    parts = urlsplit(url.strip() if "://" in url else "https://" + url.strip())
    host = (parts.hostname or "").lower()
    candidate: str | None = None
    if host in ("youtu.be", "www.youtu.be"):
        candidate = parts.path.lstrip("/").split("/")[0]
    elif host in _YOUTUBE_HOSTS:
        segments = [s for s in parts.path.split("/") if s]
        if segments[:1] == ["watch"]:
            candidate = (parse_qs(parts.query).get("v") or [""])[0]
        elif len(segments) >= 2 and segments[0] in ("shorts", "embed", "v", "live", "e"):
            candidate = segments[1]
    return candidate if candidate and _ID.match(candidate) else None


def parse_duration(text: str) -> int | None:
    """Seconds of "4:13" / "1:02:03"; None when it is not a clock time."""
    pieces = text.strip().split(":")
    if not text.strip() or not all(p.isdigit() for p in pieces) or len(pieces) > 3:
        return None
    seconds = 0
    for piece in pieces:
        seconds = seconds * 60 + int(piece)
    return seconds


def first_video(results: YoutubeResults, allow_live: bool = False) -> YoutubeVideo | None:
    """The first video of the page, skipping live streams unless asked."""
    return next((v for v in results.videos if allow_live or not v.is_live), None)


def parse_youtube_results(text: str) -> YoutubeResults:
    """Videos of a results page (HTML or InnerTube JSON), in page order."""
    data = _initial_data(text)
    videos = _videos_from_json(data) if data is not None else []
    if "<" in text[:2000] and ("/watch?v=" in text):
        dom_videos = _videos_from_dom(text)
        if len(dom_videos) > len(videos):
            log.debug("youtube.dom_fallback", json_videos=len(videos), dom_videos=len(dom_videos))
            videos = dom_videos
    return YoutubeResults(videos=videos)


def parse_watch_page(html: str) -> WatchInfo | None:
    """Id, title, channel and length of a watch page; None when it has no video details."""
    player = _extract_object(html, _PLAYER_RESPONSE)
    details = player.get("videoDetails") if isinstance(player, dict) else None
    if not isinstance(details, dict) or not details.get("videoId"):
        return None
    video_id = str(details["videoId"])
    length = str(details.get("lengthSeconds") or "")
    is_live = bool(details.get("isLive") or (details.get("isLiveContent") and length in ("", "0")))
    return WatchInfo(
        video_id=video_id,
        title=str(details.get("title") or ""),
        channel=str(details.get("author") or ""),
        duration_s=int(length) if length.isdigit() and length != "0" else None,
        url=f"https://www.youtube.com/watch?v={video_id}",
        is_live=is_live,
    )


def unplayable_reason(html: str) -> str | None:
    """Why YouTube will not play this watch page's video (its `playabilityStatus` is not OK:
    unavailable, private, age or sign-in gate), in YouTube's words; None when it is playable
    or the page does not say."""
    player = _extract_object(html, _PLAYER_RESPONSE)
    status = player.get("playabilityStatus") if isinstance(player, dict) else None
    if not isinstance(status, dict) or status.get("status") in (None, "OK"):
        return None
    reason = status.get("reason")
    return str(reason).strip() if reason else f"the video is {str(status['status']).lower()}"


def _initial_data(text: str) -> Any:
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return json.loads(stripped)
        except json.JSONDecodeError:
            log.debug("youtube.json_invalid")
            return None
    return _extract_object(text, _INITIAL_DATA)


def _extract_object(text: str, markers: tuple[str, ...]) -> Any:
    """The JSON object assigned after the first marker found, decoded with raw_decode."""
    decoder = json.JSONDecoder()
    for marker in markers:
        start = text.find(marker)
        while start != -1:
            brace = text.find("{", start + len(marker))
            if brace != -1 and not text[start + len(marker) : brace].strip():
                try:
                    return decoder.raw_decode(text, brace)[0]
                except json.JSONDecodeError:
                    log.debug("youtube.object_undecodable", marker=marker)
            start = text.find(marker, start + len(marker))
    return None


def _walk_renderers(node: Any) -> Iterator[dict[str, Any]]:
    """videoRenderer dicts in document order, not descending into skipped renderers."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _SKIPPED:
                continue
            if key == "videoRenderer" and isinstance(value, dict):
                yield value
            else:
                yield from _walk_renderers(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk_renderers(item)


def _videos_from_json(data: Any) -> list[YoutubeVideo]:
    videos: list[YoutubeVideo] = []
    seen: set[str] = set()
    for renderer in _walk_renderers(data):
        video = _video_from_renderer(renderer)
        if video is not None and video.video_id not in seen:
            seen.add(video.video_id)
            videos.append(video)
    return videos


def _runs_text(value: Any) -> str:
    if not isinstance(value, dict):
        return ""
    if "simpleText" in value:
        return str(value["simpleText"])
    return "".join(str(run.get("text", "")) for run in value.get("runs", []))


def _video_from_renderer(renderer: dict[str, Any]) -> YoutubeVideo | None:
    video_id = renderer.get("videoId")
    if not isinstance(video_id, str) or not _ID.match(video_id):
        return None
    duration = _runs_text(renderer.get("lengthText"))
    if not duration:
        duration = _overlay_time(renderer)
    channel = _runs_text(renderer.get("ownerText")) or _runs_text(renderer.get("longBylineText"))
    return YoutubeVideo(
        video_id=video_id,
        title=_runs_text(renderer.get("title")),
        channel=channel,
        duration=duration if parse_duration(duration) is not None else "",
        duration_s=parse_duration(duration),
        url=f"https://www.youtube.com/watch?v={video_id}",
        is_live=_is_live(renderer, duration),
    )


def _overlay_time(renderer: dict[str, Any]) -> str:
    for overlay in renderer.get("thumbnailOverlays", []):
        status = (
            overlay.get("thumbnailOverlayTimeStatusRenderer") if isinstance(overlay, dict) else None
        )
        if isinstance(status, dict):
            return _runs_text(status.get("text"))
    return ""


def _is_live(renderer: dict[str, Any], duration: str) -> bool:
    for badge in renderer.get("badges", []):
        meta = badge.get("metadataBadgeRenderer", {}) if isinstance(badge, dict) else {}
        label = str(meta.get("label", "")).upper()
        if "LIVE" in str(meta.get("style", "")) or label in _LIVE_WORDS:
            return True
    for overlay in renderer.get("thumbnailOverlays", []):
        status = (
            overlay.get("thumbnailOverlayTimeStatusRenderer", {})
            if isinstance(overlay, dict)
            else {}
        )
        if status.get("style") == "LIVE":
            return True
    watching = _runs_text(renderer.get("viewCountText")).lower()
    return not duration and ("watching" in watching or "spectateur" in watching)


def _videos_from_dom(html: str) -> list[YoutubeVideo]:
    try:
        doc = lxml.html.fromstring(html)
    except (ParserError, ValueError):
        return []
    blocks = doc.xpath(
        '//ytd-video-renderer | //div[contains(concat(" ", @class, " "), " yt-lockup-video ")]'
    )
    videos: list[YoutubeVideo] = []
    seen: set[str] = set()
    for block in blocks:
        if any(a.tag in _DOM_SKIP for a in block.iterancestors()):
            continue
        video = _video_from_block(block)
        if video is not None and video.video_id not in seen:
            seen.add(video.video_id)
            videos.append(video)
    return videos


def _video_from_block(block: _Element) -> YoutubeVideo | None:
    links = block.xpath(
        './/a[@id="video-title"] | .//h3//a[contains(@href,"/watch?v=")]'
        ' | .//a[contains(@href,"/watch?v=")][@title]'
    )
    if not links:
        return None
    link = links[0]
    video_id = video_id_from_url(urljoin("https://www.youtube.com/", link.get("href", "")))
    if video_id is None:
        return None
    title = (link.get("title") or _clean(link.text_content())).strip()
    duration = _first_text(block, _DOM_DURATION)
    channel = _first_text(block, _DOM_CHANNEL)
    live = bool(block.xpath(_DOM_LIVE))
    seconds = parse_duration(duration)
    return YoutubeVideo(
        video_id=video_id,
        title=title,
        channel=channel,
        duration=duration if seconds is not None else "",
        duration_s=seconds,
        url=f"https://www.youtube.com/watch?v={video_id}",
        is_live=live,
    )


def _first_text(block: _Element, xpath: str) -> str:
    for el in block.xpath(xpath):
        text = _clean(el.text_content())
        if text:
            return text
    return ""


def _clean(text: str) -> str:
    return " ".join(text.split())
