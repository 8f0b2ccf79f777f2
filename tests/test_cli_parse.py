"""`stream-browser parse ...` through search.cli.main: one JSON line per file, errors per line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from search.cli import main

FIXTURES = Path(__file__).parent / "fixtures"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict[str, object]]]:
    code = main(["--env-file", "", "parse", *argv])
    out = capsys.readouterr().out
    return code, [json.loads(line) for line in out.splitlines()]


def test_parse_serp_should_print_results_for_each_file_in_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    google = FIXTURES / "serp/zlurad-serp-parser/desktop/google.html.gz"
    captcha = FIXTURES / "serp/zlurad-serp-parser/desktop/recaptcha.html"
    code, lines = run(capsys, "serp", str(google), str(captcha))
    assert code == 0
    assert [line["file"] for line in lines] == [str(google), str(captcha)]
    first = lines[0]
    assert set(first) == {
        "file",
        "engine",
        "results",
        "ai_overview",
        "ai_overview_state",
        "answer",
        "knowledge_panel",
        "people_also_ask",
        "top_stories",
        "videos",
        "discussions",
        "short_videos",
        "blocked",
        "health",
        "generic",
    }
    assert first["engine"] == "google" and lines[1]["engine"] == "google"
    assert first["health"] == {"state": "ok", "reasons": []} and first["generic"] == []
    results = first["results"]
    assert isinstance(results, list) and len(results) == 9
    assert results[1] == {
        "rank": 2,
        "title": results[1]["title"],
        "url": "https://www.google.com/",
        "snippet": results[1]["snippet"],
    }
    assert lines[1]["blocked"] == "captcha" and lines[1]["results"] == []


def test_parse_youtube_should_list_videos(capsys: pytest.CaptureFixture[str]) -> None:
    page = FIXTURES / "youtube/search/ytsr/firstpage_01.html.gz"
    code, lines = run(capsys, "youtube", str(page))
    assert code == 0
    videos = lines[0]["videos"]
    assert isinstance(videos, list)
    assert videos[0] == {
        "video_id": "7JKFE03ix6E",
        "title": "Coronavirus-Test: Wie wird Sars-CoV-2 nachgewiesen? | Visite | NDR",
        "channel": "NDR Ratgeber",
        "duration": "4:29",
        "url": "https://www.youtube.com/watch?v=7JKFE03ix6E",
    }


def test_parse_article_should_write_non_ascii_text_unescaped(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    page = tmp_path / "page.html"
    body = "<p>Große Straße und café crème, überall.</p>" * 30
    page.write_text(
        f"<html><head><title>Über</title></head><body><article>{body}</article></body></html>",
        encoding="utf-8",
    )
    code = main(["--env-file", "", "parse", "article", str(page), "--url", "https://x.org/a"])
    out = capsys.readouterr().out
    assert code == 0
    assert "Große Straße" in out  # ensure_ascii=False
    record = json.loads(out)
    assert set(record) == {"file", "title", "text", "word_count"}
    assert record["title"] == "Über" and record["word_count"] == len(str(record["text"]).split())


def test_bad_files_should_get_an_error_line_and_exit_1_while_others_parse(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    good = tmp_path / "good.html.gz"
    good.write_bytes(
        gzip.compress((FIXTURES / "serp/zlurad-serp-parser/nojs/google-nojs.html").read_bytes())
    )
    binary = tmp_path / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    text = tmp_path / "notes.txt"
    text.write_text("just some notes")
    broken = tmp_path / "broken.html.gz"
    broken.write_bytes(gzip.compress(b"<html>" * 100)[:30])
    missing = tmp_path / "missing.html"
    files = [missing, tmp_path, good, binary, text, broken]
    code, lines = run(capsys, "serp", *map(str, files))
    assert code == 1
    assert [line["file"] for line in lines] == [str(f) for f in files]
    errors = [str(line.get("error", "")) for line in lines]
    assert "no such file" in errors[0]
    assert "is a directory" in errors[1]
    assert errors[2] == "" and len(lines[2]["results"]) == 10  # type: ignore[arg-type]
    assert "binary" in errors[3]
    assert "not HTML or JSON" in errors[4]
    assert "damaged gzip" in errors[5]
