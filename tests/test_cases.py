"""Cases (search/_cases.py): a results page whose parse was suspect, kept in the state folder
whole (the page, its parse and health, the query and the address), bounded in count and
size, with no key, token or cookie in it; and one exported as a recording."""

from __future__ import annotations

import gzip
import json
import random
import time
from pathlib import Path

import pytest

from search._cases import (
    CaseKeeper,
    CaseStore,
    Evidence,
    export_case,
    safe_url,
    scrub,
)
from search.recordings import load_case

# Seeded secrets of the kinds a page or an address may carry: none may reach a case.
API_KEY = "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW"
OAUTH = "ya29.a0AfB_byC1d2E3f4G5h6I7j8K9l0MnOpQrStUv"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dQw4w9WgXcQxyzabc123"
SERVICE_TOKEN = "svc-token-4f9a8b7c6d5e"
URL = (
    "https://www.google.com/search?q=why+is+the+sky+blue&hl=en&gl=us"
    f"&sei=SESSIONabc123&key={API_KEY}&token=tok-secret-99"
)


def page(extra: str = "", kb: int = 0) -> str:
    links = "".join(
        f'<div><a href="https://site{i}.example/a?x=1&amp;token=tok-{i}-secret">Site {i}</a>'
        f"<span>Text around link {i}.</span></div>"
        for i in range(5)
    )
    padding = f"<script>var pad='{'x' * (kb << 10)}';</script>" if kb else ""
    return (
        f"<html><head><title>why is the sky blue</title>{padding}</head><body><div id=rso>"
        f"{links}<script>var k='{API_KEY}', o='{OAUTH}', j='{JWT}', s='{SERVICE_TOKEN}';"
        f"fetch('/x', {{headers: {{Authorization: 'Bearer abcdefghijklmnopqrstuvwxyz012345'}}}});"
        f"</script><a href='https://accounts.google.com/SignOutOptions'>viewer.name@example.com"
        f"</a>{extra}</div></body></html>"
    )


def evidence(query: str = "why is the sky blue", at: float | None = None, **kw: object) -> Evidence:
    parse = {
        "engine": "google",
        "results": [],
        "health": {"state": "suspect", "reasons": ["6 outside links in the main column"]},
        "generic": [{"rank": 1, "title": "Site 0", "url": "https://site0.example/a"}],
    }
    html = str(kw.get("html", page()))
    return Evidence("google", query, URL, parse, html, time.time() if at is None else at)


def store(tmp_path: Path, **kw: int) -> CaseStore:
    return CaseStore(tmp_path / "cases", secrets=(SERVICE_TOKEN,), **kw)


def test_a_case_keeps_the_page_its_parse_health_query_address_and_time(tmp_path: Path) -> None:
    cases = store(tmp_path)
    name = cases.save(evidence())
    assert name is not None and name.endswith("-google-why-is-the-sky-blue")
    (listed,) = cases.list()
    assert listed["name"] == name and listed["query"] == "why is the sky blue"
    assert listed["health"] == {
        "state": "suspect",
        "reasons": ["6 outside links in the main column"],
    }
    assert listed["url"] == "https://www.google.com/search?q=why+is+the+sky+blue&hl=en&gl=us"
    assert listed["at"].startswith(time.strftime("%Y-%m-%d", time.gmtime()))
    shown = cases.show(name)
    assert shown["parse"]["generic"][0]["url"] == "https://site0.example/a"
    assert "Text around link 4." in cases.page(name)
    assert sorted(p.name for p in (tmp_path / "cases" / name).iterdir()) == [
        "case.json",
        "page.html.gz",
        "parse.json",
    ]


def test_no_key_token_or_cookie_reaches_a_saved_case(tmp_path: Path) -> None:
    cases = store(tmp_path)
    name = cases.save(evidence())
    assert name is not None
    folder = tmp_path / "cases" / name
    kept = "".join(
        gzip.decompress(f.read_bytes()).decode() if f.suffix == ".gz" else f.read_text()
        for f in folder.iterdir()
    )
    for secret in (API_KEY, OAUTH, JWT, SERVICE_TOKEN, "tok-secret-99", "SESSIONabc123"):
        assert secret not in kept, secret
    assert "abcdefghijklmnopqrstuvwxyz012345" not in kept  # the bearer credential
    assert "viewer.name@example.com" not in kept  # a signed-in profile's account
    assert "tok-3-secret" not in kept and "token=[scrubbed]" in kept
    assert "cookie" not in kept.lower() and "set-cookie" not in kept.lower()
    assert "Site 3" in kept, "the page's own text stays readable"


def test_the_address_keeps_only_the_search_s_own_parameters() -> None:
    assert safe_url(URL) == "https://www.google.com/search?q=why+is+the+sky+blue&hl=en&gl=us"
    bing = "https://www.bing.com/search?q=a&setlang=en&cc=us&form=QBLH&sid=ABC"
    assert safe_url(bing) == "https://www.bing.com/search?q=a&setlang=en&cc=us"


def test_scrub_leaves_plain_text_and_finds_a_key_past_a_piece_boundary() -> None:
    text = ("<p>plain text</p>" * 10_000) + f"<p>{API_KEY}</p>"
    scrubbed = scrub(text)
    assert API_KEY not in scrubbed and scrubbed.count("<p>plain text</p>") == 10_000


def test_cases_are_bounded_in_count_keeping_the_newest(tmp_path: Path) -> None:
    cases = store(tmp_path, max_count=3)
    now = time.time()
    names = [cases.save(evidence(f"query {i}", at=now + i)) for i in range(5)]
    assert [c["name"] for c in cases.list()] == names[:1:-1]


def test_cases_are_bounded_in_size_and_one_too_big_is_not_kept(tmp_path: Path) -> None:
    noise = random.Random(1).randbytes(60_000).hex()  # does not compress much
    cases = store(tmp_path, max_bytes=200_000)
    now = time.time()
    names = [cases.save(evidence(f"q {i}", at=now + i, html=page(noise))) for i in range(4)]
    kept = cases.list()
    assert 1 <= len(kept) < 4 and kept[0]["name"] == names[-1]
    total = sum(f.stat().st_size for f in (tmp_path / "cases").rglob("*") if f.is_file())
    assert total <= 200_000
    small = store(tmp_path / "small", max_bytes=10_000)
    assert small.save(evidence(html=page(noise))) is None and small.list() == []


def test_no_case_is_kept_with_cases_max_zero(tmp_path: Path) -> None:
    cases = store(tmp_path, max_count=0)
    assert cases.save(evidence()) is None
    assert not CaseKeeper(cases).submit(evidence())
    assert not (tmp_path / "cases").exists()


def test_the_keeper_saves_off_the_caller_s_thread_and_says_which_case(tmp_path: Path) -> None:
    saved: list[tuple[str, str]] = []
    keeper = CaseKeeper(store(tmp_path), on_saved=lambda engine, name: saved.append((engine, name)))
    assert keeper.submit(evidence(html=page(kb=1500)))  # a 2026-sized page
    assert keeper.store.list() == [], "submitting a case never waits for it to be written"
    assert keeper.flush(20)
    assert [e for e, _ in saved] == ["google"]
    assert keeper.store.list()[0]["name"] == saved[0][1]


def test_an_unknown_case_says_how_to_list_them(tmp_path: Path) -> None:
    from browser_core import StreamBrowserError

    with pytest.raises(StreamBrowserError) as caught:
        store(tmp_path).show("20260101T000000Z-google-nothing")
    assert "cases list" in (caught.value.hint or "")
    with pytest.raises(StreamBrowserError):
        store(tmp_path).show("../../etc")


def test_a_case_exports_as_a_recording_the_runner_loads(tmp_path: Path) -> None:
    cases = store(tmp_path)
    name = cases.save(evidence())
    assert name is not None
    folder = export_case(cases, name, tmp_path / "recordings" / "google-changed-sky")
    case = load_case(folder)
    assert (case.action, case.arg) == ("search", "why is the sky blue")
    assert case.pinned() == {
        "search_engines": ("google",),
        "google_hl": "en",
        "google_gl": "us",
        "google_udm14": False,
    }
    har = json.loads((folder / "session.har").read_text())
    (entry,) = har["log"]["entries"]
    assert (
        entry["request"]["url"] == "https://www.google.com/search?q=why+is+the+sky+blue&hl=en&gl=us"
    )
    assert "Text around link 2." in entry["response"]["content"]["text"]
    assert API_KEY not in (folder / "session.har").read_text()
    assert name in (folder / "README.md").read_text()
    from browser_core import StreamBrowserError

    with pytest.raises(StreamBrowserError):  # never over a recording
        export_case(cases, name, folder)


def test_the_cli_lists_shows_and_exports_a_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from search.cli import main

    state = tmp_path / "state"
    name = CaseStore(state / "cases").save(evidence())
    assert name is not None
    env = tmp_path / "env"
    env.write_text(f"SB_STATE_DIR={state}\n")
    assert main(["--env-file", str(env), "cases", "list"]) == 0
    listed = capsys.readouterr().out
    assert name in listed and "'why is the sky blue'" in listed and "6 outside links" in listed
    assert main(["--env-file", str(env), "cases", "show", str(name)]) == 0
    assert json.loads(capsys.readouterr().out)["parse"]["health"]["state"] == "suspect"
    assert main(["--env-file", str(env), "cases", "show", "nothing-like-it"]) == 1
    assert "cases list" in capsys.readouterr().err
    to = tmp_path / "rec"
    assert (
        main(["--env-file", str(env), "cases", "export", str(name), "--name", "g", "--to", str(to)])
        == 0
    )
    assert "update_recordings.py g" in capsys.readouterr().out
    assert load_case(to / "g").arg == "why is the sky blue"
