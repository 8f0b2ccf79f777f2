"""`stream-browser debug` and `record` on the session Chromium, offline, plus HAR scrubbing.

`debug` runs headless here (CI has no screen): what is checked is the trace, the printed
`playwright show-trace` command, the step log and the highlights. `record` records a page of
the local test server; its HAR must carry no cookie, auth or key values and must replay.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import structlog

from browser_core import Settings, _recording, stop_pid
from browser_core._recording import scrub_har_data
from browser_core.chrome import load_state
from search.cli import _dev as _cli_dev
from search.recordings._runner import load_case, run_case
from tests._server import LocalServer, Reply
from tests.conftest import make_settings

SECRETS = ("COOKIESECRET", "AUTHSECRET", "KEYSECRET", "URLKEYSECRET")
ARTICLE = (
    "<html><head><title>Harbour news</title></head><body><article><h1>Harbour news</h1>"
    + "<p>The ferry to the islands now leaves every forty minutes in winter.</p>" * 5
    + "</article></body></html>"
)
# Sets a cookie, then sends it back with an authorised, keyed XHR (kept by a slim recording)
# and a URL that carries a key (dropped). The secrets are assembled in the page so that its
# own source (which the HAR keeps) does not contain them.
SECRET_PAGE = ARTICLE.replace(
    "</body>",
    "<script>const x = new XMLHttpRequest(); x.open('GET', '/rec/api', false);"
    "x.setRequestHeader('Authorization', 'Bearer AUTH' + 'SECRET');"
    "x.setRequestHeader('X-Goog-Api-Key', 'KEY' + 'SECRET'); x.send();"
    "const y = new XMLHttpRequest(); y.open('GET', '/rec/api?key=URLKEY' + 'SECRET', false);"
    "y.send();"
    "</script></body>",
)


@pytest.fixture(autouse=True)
def _default_logging() -> Iterator[None]:
    """`debug` configures console logging on the test's (then closed) stderr, as an entry
    point does; start and end every test here with structlog's defaults instead."""
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()


@pytest.fixture
def dev_settings(settings: Settings) -> Iterator[Settings]:
    """The session Chromium; the tab the commands open (remembered in the state dir) is
    closed afterwards through the DevTools HTTP endpoint."""
    yield settings
    for state in Path(settings.state_dir).glob("owned-tab-*.json"):
        target = json.loads(state.read_text(encoding="utf-8")).get("target_id")
        if target:
            url = f"{settings.cdp_endpoint}/json/close/{target}"
            with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=5):
                pass


def run_cli(settings: Settings, *argv: str) -> int:
    parser = argparse.ArgumentParser(prog="stream-browser")
    _cli_dev.register(parser.add_subparsers())
    args = parser.parse_args(list(argv))
    return int(args.func(args, SimpleNamespace(settings=settings)))


# -- debug ---------------------------------------------------------------------------------


def test_debug_writes_a_trace_and_prints_the_show_trace_command(
    dev_settings: Settings,
    http: LocalServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = http.route("/article", Reply(ARTICLE))
    trace = tmp_path / "debug.zip"
    code = run_cli(dev_settings, "debug", "read", url, "--trace", str(trace), "--slowmo", "100")
    out, err = capsys.readouterr()
    assert code == 0, err
    assert zipfile.is_zipfile(trace)
    assert any(n.endswith(".trace") for n in zipfile.ZipFile(trace).namelist())
    assert f"playwright show-trace {trace}" in out
    assert "this Chrome is headless" in out
    assert "The ferry to the islands" in out
    assert "debug.step" in err and "at_ms=" in err  # console log with step timings
    assert "debug.highlighted" in err and "count=1" in err


def test_debug_replays_a_recording_offline(
    dev_settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "search.zip"
    code = run_cli(
        dev_settings,
        "debug",
        "search",
        "crow names",
        "--replay",
        "google-crow-names-en",
        "--trace",
        str(trace),
        "--slowmo",
        "50",
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Crow - Wikipedia" in out
    assert trace.is_file()


def test_debug_pause_without_a_display_explains_instead_of_hanging(
    dev_settings: Settings,
    http: LocalServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    url = http.route("/article", Reply(ARTICLE))
    code = run_cli(
        dev_settings,
        "debug",
        "read",
        url,
        "--pause",
        "--slowmo",
        "0",
        "--trace",
        str(tmp_path / "t.zip"),
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "Playwright Inspector cannot open: there is no $DISPLAY" in out
    assert "not pausing" in out


def test_debug_starts_a_local_chrome_when_none_answers(
    tmp_path: Path, http: LocalServer, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = make_settings(None, tmp_path, chrome_user_data_dir=str(tmp_path / "profile"))
    url = http.route("/article", Reply(ARTICLE))
    try:
        code = run_cli(
            settings,
            "debug",
            "read",
            url,
            "--headless",
            "--slowmo",
            "0",
            "--trace",
            str(tmp_path / "t.zip"),
        )
    finally:
        state = load_state(settings.state_dir, settings.cdp_port)
        if state is not None:
            stop_pid(state.pid)
    out = capsys.readouterr().out
    assert code == 0
    assert state is not None, "the started Chrome was not saved for `chrome --stop`"
    assert f"started a local Chrome: pid {state.pid}" in out
    assert f"stream-browser chrome --stop --port {settings.cdp_port}" in out


def test_debug_with_an_unknown_recording_names_the_known_ones(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(settings, "debug", "search", "x", "--replay", "no-such-case") == 2
    err = capsys.readouterr().err
    assert "no recording 'no-such-case'" in err and "google-crow-names-en" in err


# -- record --------------------------------------------------------------------------------


def test_record_writes_a_scrubbed_har_that_replays_offline(
    dev_settings: Settings,
    http: LocalServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)  # the trace goes to ./test-results/
    url = http.route(
        "/rec/page",
        Reply(
            SECRET_PAGE,
            headers={
                "Set-Cookie": "sid=COOKIESECRET; Path=/",
                "Authorization": "Bearer AUTHSECRET",
            },
        ),
    )
    http.route("/rec/api", Reply('{"ok": true}', content_type="application/json"))
    code = run_cli(
        dev_settings,
        "record",
        "read",
        url,
        "--name",
        "local-page",
        "--dir",
        str(tmp_path / "recordings"),
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    folder = tmp_path / "recordings" / "local-page"
    har_text = (folder / "session.har").read_text(encoding="utf-8")
    leaked = [secret for secret in SECRETS if secret in har_text]
    assert leaked == [], f"secrets in the written HAR: {leaked}"
    urls = [e["request"]["url"] for e in json.loads(har_text)["log"]["entries"]]
    assert url in urls and http.url("/rec/api") in urls
    assert json.loads((folder / "action.json").read_text()) == {
        "action": "read",
        "arg": url,
        "options": {},
    }
    pinned = json.loads((folder / "expected.json").read_text())  # what the brain receives
    assert pinned["result"]["provider"] == "read" and pinned["result"]["data"]["outcome"] == "ok"
    assert (tmp_path / "test-results/recordings/local-page/trace.zip").is_file()
    assert "the replay reproduces the live run" in out

    http.reset()  # the page is gone from the server: only the recording can answer
    replayed = asyncio.run(run_case(load_case(folder), dev_settings))
    assert "forty minutes in winter" in replayed["result"]["data"]["text"]
    assert http.requests == []


def test_record_refuses_to_overwrite_and_bad_names(
    settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "taken").mkdir()
    base = ("record", "read", "https://example.org/", "--dir", str(tmp_path))
    assert run_cli(settings, *base, "--name", "taken") == 2
    assert "pass --force to replace it" in capsys.readouterr().err
    assert run_cli(settings, *base, "--name", "Bad Name!") == 2
    assert "lower case letters" in capsys.readouterr().err


# -- scrubbing -----------------------------------------------------------------------------


def _entry(url: str, status: int = 200, kind: str = "document") -> dict[str, Any]:
    secret_headers = [
        {"name": "Cookie", "value": "a=COOKIESECRET"},
        {"name": "authorization", "value": "Bearer AUTHSECRET"},
        {"name": "X-Goog-Api-Key", "value": "KEYSECRET"},
        {"name": "Accept", "value": "text/html"},
    ]
    return {
        "request": {
            "url": url,
            "headers": secret_headers,
            "cookies": [{"name": "a", "value": "COOKIESECRET"}],
        },
        "response": {
            "status": status,
            "headers": [
                {"name": "Set-Cookie", "value": "b=COOKIESECRET"},
                {"name": "content-type", "value": "text/html"},
            ],
            "cookies": [{"name": "b", "value": "COOKIESECRET"}],
            "content": {"text": "<p>"},
        },
        "_resourceType": kind,
    }


def test_scrub_removes_secrets_failed_entries_key_urls_and_other_tabs() -> None:
    har: dict[str, Any] = {
        "log": {
            "entries": [
                _entry("https://www.google.com/search?q=x"),
                _entry("https://www.google.com/gen_204", status=-1),
                _entry("https://youtubei.googleapis.com/v1/player?key=URLKEYSECRET", kind="fetch"),
                _entry("https://other-tab.example/"),
                _entry("https://www.gstatic.com/logo.png", kind="image"),
            ]
        }
    }
    report = scrub_har_data(
        har,
        only_urls=[
            "https://www.google.com/search?q=x",
            "https://www.google.com/gen_204",
            "https://youtubei.googleapis.com/v1/player?key=URLKEYSECRET",
            "https://www.gstatic.com/logo.png",
        ],
        resource_types={"document", "fetch"},
    )
    (kept,) = har["log"]["entries"]
    assert kept["request"]["url"] == "https://www.google.com/search?q=x"
    assert not any(secret in json.dumps(har) for secret in SECRETS)
    assert [h["name"] for h in kept["request"]["headers"]] == ["Accept"]
    assert [h["name"] for h in kept["response"]["headers"]] == ["content-type"]
    assert (report.dropped_failed, report.dropped_secret_urls, report.dropped_other) == (1, 1, 2)
    assert not report.signed_in


def test_scrub_flags_a_page_served_to_a_signed_in_account() -> None:
    entry = _entry("https://www.google.com/search?q=x")
    entry["response"]["content"] = {"text": '<a href="/SignOutOptions">me@example.com</a>'}
    assert scrub_har_data({"log": {"entries": [entry]}}).signed_in


def test_record_of_a_page_whose_frame_never_finishes_fails_and_writes_nothing(
    dev_settings: Settings,
    http: LocalServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_recording, "DOCUMENTS_WAIT_S", 0.3)
    frame = http.route("/rec/frame", Reply("<p>still coming</p>" * 3000, trickle_s=8.0))
    url = http.route("/rec/framed", Reply(ARTICLE.replace("</body>", '<iframe src="/rec/frame">')))
    folder = tmp_path / "recordings" / "framed"
    code = run_cli(
        dev_settings, "record", "read", url, "--name", "framed", "--dir", str(folder.parent)
    )
    err = capsys.readouterr().err
    assert code == 1
    assert f"the recording lost the body of {frame} (still loading 0.3 s after" in err
    assert "Traceback" not in err
    assert not folder.exists()
