"""Recorded sessions as regression tests: every folder under tests/recordings/ is one case.

Each case is replayed through the real browser path (the session Chromium, `route_from_har`,
nothing reaches the internet) and compared with its expected.json on the stable fields
(ranks, titles, URLs, video ids, blocked; read texts by word overlap). A failing case keeps
its Playwright trace in test-results/recordings/NAME/trace.zip.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from browser_core import ChromeProcess
from browser_core._recording import empty_documents
from browser_core._replay import RECORDINGS_DIR
from search.cli import main
from search.recordings._runner import (
    case_folders,
    compare,
    load_case,
    replay_plan,
    run_case,
    stable_view,
    text_overlap,
)
from tests.conftest import make_settings

RESULTS_DIR = Path(__file__).resolve().parents[1] / "test-results" / "recordings"
FOLDERS = case_folders(RECORDINGS_DIR)
# Recordings this suite must always hold (so an accidental deletion fails loudly).
REQUIRED_KINDS = {"search", "read", "play"}


def _failure_report(name: str, problems: list[str], trace: Path) -> str:
    kept = (
        f"trace: {trace}\n  view it with: playwright show-trace {trace}"
        if trace.is_file()
        else "no trace was written"
    )
    return (
        f"recording {name!r} no longer replays to its expected.json:\n\n"
        + "\n\n".join(problems)
        + f"\n\n{kept}\n"
        "If the change is intended (a parser or provider improved), refresh the expected "
        f"output with `make update-recordings` (or scripts/update_recordings.py {name}) "
        "and commit it with the change."
    )


def test_recordings_cover_every_action() -> None:
    kinds = {load_case(folder).action for folder in FOLDERS}
    assert kinds >= REQUIRED_KINDS, f"tests/recordings/ lacks a {REQUIRED_KINDS - kinds} case"


def test_every_recorded_document_carries_its_body() -> None:
    """A HAR written while a page was still loading kept an empty body (the replay then
    finds "Document is empty"); none may be committed."""
    empty = {
        folder.name: urls
        for folder in FOLDERS
        if (urls := empty_documents(json.loads((folder / "session.har").read_text("utf-8"))))
    }
    assert empty == {}, "recordings with a document kept without its body (record them again)"


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_recording_replays_to_its_expected_output(
    folder: Path, chrome: ChromeProcess, tmp_path: Path
) -> None:
    case = load_case(folder)
    expected = case.expected()
    trace = RESULTS_DIR / case.name / "trace.zip"
    trace.unlink(missing_ok=True)
    actual = asyncio.run(
        run_case(
            case,
            make_settings(chrome, tmp_path),
            trace_path=trace,
            keep_trace=lambda payload: bool(compare(case.action, expected, payload)),
            close_tab=True,
        )
    )
    problems = compare(case.action, expected, actual)
    if problems:
        pytest.fail(_failure_report(case.name, problems, trace), pytrace=False)


def brain(data: dict[str, Any], provider: str = "google") -> dict[str, Any]:
    """A payload as the brain receives it (what run_action pins): an answer and its chain."""
    result = {"success": True, "failure_kind": None, "provider": provider, "data": data}
    return {"result": result, "chain": [{"provider": provider, "ok": True, "failure_kind": None}]}


def test_compare_reports_a_readable_diff_on_stable_fields_only() -> None:
    expected = brain(
        {
            "results": [
                {"rank": 1, "title": "Crow - Wikipedia", "url": "https://w/c", "snippet": "old"}
            ],
            "reads": [],
        }
    )
    unstable_change = json.loads(json.dumps(expected))
    unstable_change["result"]["data"]["results"][0]["snippet"] = "new snippet"
    unstable_change["result"]["reply_text"] = "another nonce"
    assert compare("search", expected, unstable_change) == []
    title_change = json.loads(json.dumps(expected))
    title_change["result"]["data"]["results"][0]["title"] = "Crows"
    (problem,) = compare("search", expected, title_change)
    assert '-   "title": "Crow - Wikipedia",' in problem.splitlines()
    assert '+   "title": "Crows",' in problem.splitlines()


def test_compare_accepts_read_texts_above_the_overlap_threshold() -> None:
    base = {"outcome": "ok", "status": 200, "final_url": "u", "title": "t"}
    text = " ".join(f"word{i}" for i in range(100))
    close = text.replace("word5 ", "")  # one word lost
    assert text_overlap(text, close) == pytest.approx(0.99)
    want = brain({**base, "text": text}, "read")
    assert compare("read", want, brain({**base, "text": close}, "read")) == []
    (problem,) = compare("read", want, brain({**base, "text": "something else"}, "read"))
    assert problem.startswith("text 0: word overlap 0.00")


def test_a_failed_call_is_pinned_by_its_chain() -> None:
    """A captcha page: no answer, and the hops the brain would see (Google, then the
    recording's Gemini stand-in)."""
    chain = [
        {"provider": "google", "ok": False, "failure_kind": "captcha"},
        {"provider": "gemini", "ok": False, "failure_kind": "gemini-unavailable"},
    ]
    payload = {"result": None, "chain": chain}
    hops = [["google", "captcha"], ["gemini", "gemini-unavailable"]]
    assert stable_view("search", payload) == {"hops": hops}
    assert compare("search", payload, brain({"results": [], "reads": []}))


def test_a_failed_action_is_pinned_by_its_failure_kind() -> None:
    payload = {"error": {"kind": "navigation-failed", "message": "could not open"}}
    assert stable_view("play", payload) == {"error": "navigation-failed"}
    assert compare("play", payload, brain({"video_id": "x", "url": "u", "playing": True}))


# -- replaying from the command line with only the recording's name ------------------------


NO_ENV = ["--env-file", "/nonexistent/.env"]


@pytest.fixture
def cli_env(chrome: ChromeProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI on the session Chromium, with the code defaults for Google's options."""
    monkeypatch.setenv("CDP_PORT", str(chrome.port))
    monkeypatch.setenv("SB_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("STREAM_BROWSER_CONFIG", str(tmp_path / "no-config.toml"))
    for name in ("SB_GOOGLE_HL", "SB_GOOGLE_GL", "SB_GOOGLE_UDM14"):
        monkeypatch.delenv(name, raising=False)


def test_search_replays_a_recording_with_only_its_name(
    cli_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """The recording pins hl=sv, gl=se: the replay asks for the recorded URL by itself."""
    name = "google-matkasse-goteborg-sv"
    assert main([*NO_ENV, "search", "matkasse göteborg", "--replay", name, "--json"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    expected = load_case(RECORDINGS_DIR / name).expected()
    want = expected["result"]["data"]["results"]
    assert [r["url"] for r in data["results"]] == [r["url"] for r in want]
    assert "note:" not in err


def test_a_flag_overrides_the_recorded_option(
    cli_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--hl en` asks for a URL the Swedish recording never saw: the request is aborted."""
    name = "google-matkasse-goteborg-sv"
    code = main([*NO_ENV, "search", "matkasse göteborg", "--replay", name, "--hl", "en"])
    assert code == 1
    assert "ERR_FAILED" in capsys.readouterr().err


def test_replaying_another_query_says_which_query_was_recorded(
    cli_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "google-matkasse-goteborg-sv"
    assert main([*NO_ENV, "search", "matkasse stockholm", "--replay", name]) == 1
    err = capsys.readouterr().err
    assert f"recording '{name}' was made for `search \"matkasse göteborg\"`" in err
    assert f'stream-browser search "matkasse göteborg" --replay {name}' in err


def test_replay_plan_keeps_a_bare_har_as_configured(tmp_path: Path) -> None:
    har = tmp_path / "x.har"
    har.write_text('{"log": {"entries": []}}', encoding="utf-8")
    base = make_settings(None, tmp_path, google_hl="de")
    plan = replay_plan(str(har), base, action="search", arg="x", overrides={"google_gl": "at"})
    assert plan.case is None and plan.note is None
    assert (plan.settings.google_hl, plan.settings.google_gl) == ("de", "at")
