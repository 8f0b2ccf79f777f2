"""Reading the Gemini CLI's session record of one run (gemini/_session.py): where it is,
the sources in it, the answer's markers, what is removed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from browser_core import Source
from gemini._session import (
    RecordError,
    cite,
    find_record,
    messages_of,
    parse_sources,
    read_record,
    run_files,
)
from gemini.testing import session_record

SID = "f13848c4-4036-46b5-a63f-f1b6a9aea758"
WIKI = Source(title="wikipedia.org", url="https://en.wikipedia.org/wiki/Rayleigh_scattering")
NASA = Source(title="nasa.gov", url="https://www.nasa.gov/sky/")
ESA = Source(title="esa.int", url="https://www.esa.int/sky")


def write_record(folder: Path, records: tuple[dict, ...] | list[dict], sid: str = SID) -> Path:
    chats = folder / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    path = chats / f"session-2026-12-01T09-42-{sid[:8]}.jsonl"
    lines = (json.dumps(r).replace("@SESSION_ID@", sid).replace("@QUERY@", "q") for r in records)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_sources_list_of_a_search_output_is_read_by_number() -> None:
    output = (
        'Web search results for "sky":\n\nBlue light scatters.[1][2]\n\nSources:\n'
        "[1] wikipedia.org (https://en.wikipedia.org/wiki/Rayleigh_scattering)\n"
        "[2] Untitled (No URI)\n"
        "[3] Untitled (https://www.esa.int/sky)"
    )
    assert parse_sources(output) == (WIKI, None, Source(title="", url=ESA.url))
    assert parse_sources("Web search results for x:\n\nnothing found") == ()


def test_markers_are_renumbered_into_the_sources_and_dangling_ones_removed() -> None:
    text, sources = cite("Blue [1][2]. Red [3]. Both [1, 2].[7]", ((WIKI, NASA),))
    assert text == "Blue [1][2]. Red. Both [1][2]."
    assert sources == [WIKI, NASA]


def test_with_several_searches_a_marker_is_the_latest_searchs_number() -> None:
    """Each search numbers its own list from 1; the sources are all of them, once each."""
    text, sources = cite("Blue [1]. Space [2].", ((WIKI, NASA), (ESA, WIKI)))
    assert sources == [WIKI, NASA, ESA]
    assert text == "Blue [3]. Space [1]."


def test_without_a_record_markers_go_and_urls_in_the_text_are_the_sources() -> None:
    text, sources = cite("Blue [1][2], see https://www.nasa.gov/sky/.", ())
    assert text == "Blue, see https://www.nasa.gov/sky/."
    assert [s.url for s in sources] == [NASA.url]


def test_a_rewritten_message_list_replaces_the_earlier_messages() -> None:
    records: list[dict[str, Any]] = [
        {"id": "a", "type": "user", "content": "old"},
        {"$set": {"messages": [{"id": "b", "type": "user", "content": "new"}]}},
        {"id": "c", "type": "gemini", "content": "x"},
        {"id": "c", "type": "gemini", "content": "y"},
    ]
    assert [(m["id"], m["content"]) for m in messages_of(records)] == [("b", "new"), ("c", "y")]


def test_the_record_is_found_through_projects_json_and_by_its_full_session_id(
    tmp_path: Path,
) -> None:
    home, workdir = tmp_path / ".gemini", tmp_path / "work" / "cwd"
    workdir.mkdir(parents=True)
    (home / "tmp").mkdir(parents=True)
    (home / "projects.json").write_text(json.dumps({"projects": {str(workdir): "cwd-1"}}))
    write_record(home / "tmp" / "cwd", session_record("a"), SID[:8] + "-0000-other-session")
    ours = write_record(home / "tmp" / "cwd-1", session_record("b [1]"))
    assert find_record(home, workdir, SID) == (home / "tmp" / "cwd-1", ours)
    record = read_record(ours, SID)
    assert record.model == "gemini-3.8-flash" and record.queries == ("q",)
    assert [s.url for s in record.searches[0] if s] == [
        "https://en.wikipedia.org/wiki/Rayleigh_scattering",
        "https://www.britannica.com/science/Rayleigh-scattering",
    ]


@pytest.mark.parametrize(
    "lines",
    [
        ["not json"],
        [json.dumps({"sessionId": "someone-else"}), json.dumps({"id": "g", "type": "gemini"})],
        [json.dumps({"sessionId": SID}), json.dumps({"id": "u", "type": "user"})],
        [json.dumps({"sessionId": SID}), "[1, 2]"],
    ],
    ids=["not-json", "another-session", "no-model-turn", "not-an-object"],
)
def test_a_record_in_another_shape_is_a_record_error(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "session-x.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(RecordError):
        read_record(path, SID)


def test_the_files_of_one_run_are_the_ones_the_cli_itself_deletes(tmp_path: Path) -> None:
    record = tmp_path / "chats" / "session-x.jsonl"
    assert run_files(tmp_path, record, SID) == [
        record,
        tmp_path / "logs" / f"session-{SID}.jsonl",
        tmp_path / "tool-outputs" / f"session-{SID}",
        tmp_path / SID,
        tmp_path / "chats" / SID,
    ]
