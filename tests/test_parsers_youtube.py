"""YouTube parsers against saved results pages, InnerTube JSON, rendered DOMs and watch pages."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import lxml.html
import pytest

from search.parsers import (
    YoutubeResults,
    YoutubeVideo,
    first_video,
    parse_watch_page,
    parse_youtube_results,
    video_id_from_url,
)

YT = Path(__file__).parent / "fixtures" / "youtube"


def read(path: Path) -> str:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8")


@pytest.mark.parametrize(
    "stem", ["2019-07-14_youtube-pudding-1563068696", "2019-06-22_youtube-kutyaplya-1561171748"]
)
def test_static_2019_pages_should_give_the_approved_videos_in_order(stem: str) -> None:
    """AQL's approved output lists channels and playlists too; we keep the distinct videos."""
    expected = json.loads((YT / f"search/aql-wayback/{stem}.expected.json").read_text())
    ids = [video_id_from_url(r["url"]) for r in expected["results"] if "list=" not in r["url"]]
    truth = list(dict.fromkeys(i for i in ids if i))
    results = parse_youtube_results(read(YT / f"search/aql-wayback/{stem}.html.gz"))
    assert [v.video_id for v in results.videos] == truth
    titles = {video_id_from_url(r["url"]): r["title"] for r in expected["results"]}
    first = results.videos[0]
    assert titles[first.video_id].startswith(first.title)
    assert first.duration_s == sum(
        int(p) * 60**i for i, p in enumerate(reversed(first.duration.split(":")))
    )


def test_ytinitialdata_page_should_give_the_first_page_of_videos() -> None:
    text = read(YT / "search/ytsr/firstpage_01.html.gz")
    results = parse_youtube_results(text)
    # ytsr counts 15 items without its shelves; 20 videoRenderer entries stand outside shelves.
    assert len(results.videos) == 20
    assert results.videos[0] == YoutubeVideo(
        video_id="7JKFE03ix6E",
        title="Coronavirus-Test: Wie wird Sars-CoV-2 nachgewiesen? | Visite | NDR",
        channel="NDR Ratgeber",
        duration="4:29",
        duration_s=269,
        url="https://www.youtube.com/watch?v=7JKFE03ix6E",
    )


def test_window_assignment_form_should_be_read_too() -> None:
    stem = "2020-03-14_youtube-razbor-shchetki-pylesosa-samsung-1584184489"
    text = read(YT / f"search/aql-wayback/{stem}.html.gz")
    assert 'window["ytInitialData"]' in text
    videos = parse_youtube_results(text).videos
    assert len(videos) == 20 and videos[0].video_id == "7aNK2cZtVN8"


def test_continuation_json_should_be_parsed_directly() -> None:
    results = parse_youtube_results(read(YT / "search/ytsr/secondpage_01.continuation.json.gz"))
    assert len(results.videos) == 18
    assert results.videos[0].video_id == "gAbxeKXDeIY"
    assert results.videos[0].duration == "38:48"


def renderer(name: str) -> dict[str, object]:
    path = YT / f"search/ytsr/renderers/{name}.json"
    return dict(json.loads(read(path if path.exists() else path.with_suffix(".json.gz"))))


@pytest.mark.parametrize(
    "name",
    [
        "reelShelfRenderer_02",
        "searchPyvRenderer_01",
        "playlistRenderer_01",
        "channelRenderer_01",
        "promotedSparklesWebRenderer_01",
        "radioRenderer_01",
    ],
)
def test_ads_shorts_channels_and_playlists_should_not_be_videos(name: str) -> None:
    assert parse_youtube_results(json.dumps(renderer(name)["raw"])).videos == []


@pytest.mark.parametrize("name", ["videoRenderer_01", "videoRenderer_07"])
def test_video_renderer_should_match_ytsr_parse(name: str) -> None:
    data = renderer(name)
    parsed = data["parsed"]
    assert isinstance(parsed, dict)
    (video,) = parse_youtube_results(json.dumps(data["raw"])).videos
    assert (video.video_id, video.title, video.is_live) == (
        parsed["id"],
        parsed["title"],
        parsed["isLive"],
    )
    assert video.duration == (parsed["duration"] or "")
    assert video.channel == parsed["author"]["name"]


def test_rendered_dom_should_find_every_regular_video_and_no_lockups() -> None:
    stem = "2026-07-04_qft_ja-JP_playlists-courses"
    facts = json.loads(read(YT / f"search/nwatab-rendered-dom/{stem}.expected.partial.json"))
    html = read(YT / f"search/nwatab-rendered-dom/{stem}.html.gz")
    results = parse_youtube_results(html)
    assert len(results.videos) == facts["expected"]["regular_videos"]
    doc = lxml.html.fromstring(html)
    assert len(doc.xpath("//yt-lockup-view-model")) == 2  # the playlist/course lockups left out
    assert results.videos[0].video_id == "6ddIuXICmsg"
    assert results.videos[0].duration == "3:27"


def test_first_video_should_skip_live_unless_asked() -> None:
    live = YoutubeVideo(video_id="aaaaaaaaaaa", title="live", url="u", is_live=True)
    vod = YoutubeVideo(video_id="bbbbbbbbbbb", title="vod", url="u", duration="1:00", duration_s=60)
    results = YoutubeResults(videos=[live, vod])
    assert first_video(results) == vod
    assert first_video(results, allow_live=True) == live
    assert first_video(YoutubeResults()) is None


@pytest.mark.parametrize("name", ["regular", "live-now", "age-restricted-vi-VN"])
def test_watch_page_should_agree_with_ytdl_core_expected_info(name: str) -> None:
    info = json.loads(read(YT / f"watch/ytdl-core/{name}.expected-info.json.gz"))["videoDetails"]
    watch = parse_watch_page(read(YT / f"watch/ytdl-core/{name}.watch.html.gz"))
    assert watch is not None
    assert (watch.video_id, watch.title) == (info["videoId"], info["title"])
    author = info["author"]
    assert watch.channel == (author["name"] if isinstance(author, dict) else author)
    length = int(info["lengthSeconds"])
    assert watch.duration_s == (length or None)
    assert watch.is_live == (name == "live-now")


def test_watch_page_without_player_response_should_give_none() -> None:
    assert parse_watch_page("<html><body>nothing</body></html>") is None


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=10s", "dQw4w9WgXcQ"),
        ("https://youtu.be/dQw4w9WgXcQ?si=x", "dQw4w9WgXcQ"),
        ("https://www.youtube.com/shorts/dQw4w9WgXcQ", "dQw4w9WgXcQ"),
        ("https://www.youtube.com/embed/dQw4w9WgXcQ", "dQw4w9WgXcQ"),
        ("https://m.youtube.com/watch?v=dQw4w9WgXcQ", "dQw4w9WgXcQ"),
        ("https://music.youtube.com/watch?v=dQw4w9WgXcQ&list=RDAMVM", "dQw4w9WgXcQ"),
        ("youtube.com/watch?v=dQw4w9WgXcQ", "dQw4w9WgXcQ"),
        ("https://www.youtube.com/channel/UCGWediZlc3a2tTDL3LsR75g", None),
        ("https://www.youtube.com/watch?v=short", None),
        ("https://vimeo.com/watch?v=dQw4w9WgXcQ", None),
        ("https://example.com/youtu.be/dQw4w9WgXcQ", None),
    ],
)
def test_video_id_from_url(url: str, expected: str | None) -> None:
    assert video_id_from_url(url) == expected
