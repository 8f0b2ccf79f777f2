"""`stream-browser serve` as a real process on an ephemeral port, over the session's Chromium.

Access control (token, Origin, Host, body size), first-come-first-served with one owned tab
for twenty client processes at once, a full queue refused at once, a SIGTERM drain that lets
the running call finish, metrics and status, and a token that never reaches the log.
"""

from __future__ import annotations

import http.client
import importlib.metadata
import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from browser_core import ChromeProcess, build_settings, cdp_targets, cdp_version
from search import client
from search.service import Access, StartRefused, allowed_hosts, bind, ensure_token
from tests._server import LocalServer, Reply
from tests._service_proc import (  # noqa: F401 (shared_service is a fixture)
    ROOT,
    ServiceProc,
    clean_env,
    close_owned_tab,
    shared_service,
    start_service,
    wait_until,
)

CLIENT_FILE = ROOT / "search" / "client.py"


@pytest.fixture
def svc(shared_service: ServiceProc) -> ServiceProc:  # noqa: F811
    return shared_service


def _raw(
    service: ServiceProc,
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
    token: str | None = "auto",
) -> tuple[int, dict[str, str], bytes]:
    """One request with exactly these headers (the token unless `token=None`)."""
    host_port = service.url.split("://", 1)[1]
    host, port = host_port.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    sent = {"Host": host_port, **(headers or {})}
    if token is not None:
        sent["Authorization"] = f"Bearer {service.token if token == 'auto' else token}"
    if body is not None:
        sent.setdefault("Content-Type", "application/json")
    try:
        conn.request(method, path, body=body, headers=sent)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def _browse(service: ServiceProc, **body: Any) -> tuple[int, dict[str, Any]]:
    status, _, raw = _raw(service, "POST", "/v1/browse", body=json.dumps(body).encode())
    return status, json.loads(raw)


def _pages(chrome: ChromeProcess) -> int:
    return sum(1 for t in cdp_targets(chrome.endpoint) if t.get("type") == "page")


# -- access control ---------------------------------------------------------------------------


def test_healthz_answers_without_a_token_and_names_the_version(svc: ServiceProc) -> None:
    status, _, body = _raw(svc, "GET", "/healthz", token=None)
    version = importlib.metadata.version("stream-browser")
    assert status == 200
    assert json.loads(body) == {"ok": True, "draining": False, "version": version}


@pytest.mark.parametrize("path", ["/readyz", "/v1/status", "/metrics", "/mcp"])
@pytest.mark.parametrize("token", [None, "wrong-token"])
def test_every_other_endpoint_needs_the_bearer_token(
    svc: ServiceProc, path: str, token: str | None
) -> None:
    status, headers, body = _raw(svc, "GET", path, token=token)
    assert status == 401
    # a challenge that names the wrong token and points at no OAuth metadata to discover
    assert headers["www-authenticate"].startswith('Bearer error="invalid_token"')
    assert "resource_metadata" not in headers["www-authenticate"]
    error = json.loads(body)["error"]
    assert error["kind"] == "unauthorized"
    assert "SB_SERVICE_TOKEN" in error["fix"]  # says how to fix it


@pytest.mark.parametrize(
    "path", ["/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server"]
)
def test_oauth_discovery_finds_nothing_and_says_to_send_the_token(
    svc: ServiceProc, path: str
) -> None:
    status, _, body = _raw(svc, "GET", path, token=None)
    assert status == 404
    assert "does not do OAuth" in json.loads(body)["error"]["message"]


def test_browse_without_the_token_is_refused_before_it_runs(svc: ServiceProc) -> None:
    body = json.dumps({"query": "x", "action": "search"}).encode()
    status, _, _ = _raw(svc, "POST", "/v1/browse", body=body, token=None)
    assert status == 401


@pytest.mark.parametrize(
    "header",
    [
        {"Origin": "http://127.0.0.1:9"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "same-site"},
        {"Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"},
    ],
)
def test_a_request_made_by_a_web_page_is_refused_even_with_the_token(
    svc: ServiceProc, header: dict[str, str]
) -> None:
    status, _, body = _raw(svc, "GET", "/v1/status", headers=header)
    assert status == 403
    error = json.loads(body)["error"]
    assert error["kind"] == "refused" and "web pages" in error["message"]


@pytest.mark.parametrize(
    "header",
    [{"Sec-Fetch-Mode": "cors"}, {"Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "none"}],
)
def test_what_node_fetch_sends_is_not_taken_for_a_browser(
    svc: ServiceProc, header: dict[str, str]
) -> None:
    """Node's fetch (undici) always sends `Sec-Fetch-Mode: cors`; no Origin, no Site."""
    status, _, _ = _raw(svc, "GET", "/v1/status", headers=header)
    assert status == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1.nip.io"])
def test_a_host_header_that_is_not_the_bound_address_is_refused(
    svc: ServiceProc, host: str
) -> None:
    status, _, _ = _raw(svc, "GET", "/v1/status", headers={"Host": host})
    assert status == 403


def test_localhost_names_the_loopback_address(svc: ServiceProc) -> None:
    port = svc.url.rsplit(":", 1)[1]
    status, _, _ = _raw(svc, "GET", "/v1/status", headers={"Host": f"localhost:{port}"})
    assert status == 200


def test_an_oversized_body_is_refused(svc: ServiceProc) -> None:
    body = json.dumps({"query": "x" * 70_000}).encode()
    status, _, _ = _raw(svc, "POST", "/v1/browse", body=body)
    assert status == 413


def test_an_unknown_action_is_a_422_naming_the_actions(svc: ServiceProc) -> None:
    status, answer = _browse(svc, query="x", action="dance")
    assert status == 422
    assert answer["error"]["kind"] == "bad-arguments"
    assert "search" in answer["error"]["message"] and "dance" in answer["error"]["message"]


def test_an_unknown_field_is_a_422_in_the_same_error_body(svc: ServiceProc) -> None:
    status, answer = _browse(svc, query="x", colour="blue")
    assert status == 422
    assert set(answer) == {"error"}
    assert set(answer["error"]) == {"kind", "message", "fix"}
    assert "colour" in answer["error"]["message"]


def test_the_token_file_is_private(svc: ServiceProc) -> None:
    mode = stat.S_IMODE((svc.state_dir / "service-token").stat().st_mode)
    assert mode == 0o600
    assert len(svc.token) >= 32


# -- calls ------------------------------------------------------------------------------------


def test_browse_reads_a_local_page_and_returns_the_library_result(
    svc: ServiceProc, http: LocalServer
) -> None:
    url = http.route("/svc-article", Reply("<title>Svc</title><p>" + "Kestrels hover. " * 40))
    status, answer = _browse(svc, query=url, action="read", broadcasting=True)
    assert status == 200
    result = answer["result"]
    assert result["success"] is True and result["provider"] == "read"
    assert "Kestrels hover." in result["reply_text"]
    assert [hop["provider"] for hop in answer["chain"]] == ["read"]


def test_twenty_client_processes_at_once_are_answered_in_arrival_order_on_one_tab(
    svc: ServiceProc, chrome: ChromeProcess, http: LocalServer
) -> None:
    warm = http.route("/fcfs-warm", Reply("<p>" + "warm text. " * 40))
    assert _browse(svc, query=warm, action="read", broadcasting=True)[0] == 200
    tabs_before = _pages(chrome)
    turns_before = len(svc.events("service.turn"))
    urls = [
        http.route(f"/fcfs/{i}", Reply(f"<p>page {i}. " + "body text. " * 40)) for i in range(20)
    ]
    env = clean_env(SB_SERVICE_URL=svc.url, SB_SERVICE_TOKEN=svc.token)
    procs = [
        subprocess.Popen(
            ["python3", "-I", "-S", str(CLIENT_FILE), url, "read", url],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for url in urls
    ]
    answers = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    for index, answer in enumerate(answers):
        assert answer["result"]["success"] is True, answer
        assert f"page {index}." in answer["result"]["reply_text"]
    turns = [e["ticket"] for e in svc.events("service.turn")][turns_before:]
    assert len(turns) == 20 and turns == sorted(turns)  # served in the order they arrived
    fetched = [p for p in http.requests if p.startswith("/fcfs/")]
    assert len(fetched) == 20
    assert _pages(chrome) == tabs_before  # the one owned tab, reused by every caller


def test_playback_status_is_an_action_of_the_same_endpoint(
    svc: ServiceProc, http: LocalServer
) -> None:
    url = http.route("/svc-playing", Reply("<p>" + "Nothing plays here. " * 40))
    assert _browse(svc, query=url, action="read", broadcasting=True)[0] == 200
    status, answer = _browse(svc, action="status", broadcasting=True)
    assert status == 200
    result = answer["result"]
    assert result["provider"] == "youtube" and result["action"] == "status"
    assert result["success"] is True
    assert "Nothing is playing on the stream." in result["reply_text"]
    assert [hop["provider"] for hop in answer["chain"]] == ["youtube"]
    # status only looks: the page on the stream stays
    assert json.loads(_raw(svc, "GET", "/v1/status")[2])["screen"]["owned_tab_url"] == url


def test_status_reports_the_queue_the_screen_and_chrome(
    svc: ServiceProc, chrome: ChromeProcess, http: LocalServer
) -> None:
    url = http.route("/svc-status", Reply("<p>" + "on screen now. " * 40))
    assert _browse(svc, query=url, action="read", broadcasting=True)[0] == 200
    status, _, body = _raw(svc, "GET", "/v1/status")
    data = json.loads(body)
    assert status == 200
    assert data["screen"]["owned_tab_url"] == url
    assert data["queue"] == {"running": None, "running_s": None, "waiting": 0, "max_waiting": 32}
    assert data["chrome"]["endpoint"] == chrome.endpoint
    assert data["service"]["draining"] is False
    assert data["service"]["version"] == importlib.metadata.version("stream-browser")


def _instance_of(service: ServiceProc) -> str:
    return str(json.loads(_raw(service, "GET", "/v1/status")[2])["instance"])


def test_without_sb_instance_the_host_name_names_the_service_in_status_and_every_log_line(
    svc: ServiceProc,
) -> None:
    host = re.sub(r"[^A-Za-z0-9_.-]", "-", socket.gethostname()).strip("-._")[:63]
    assert _instance_of(svc) == host  # a Kubernetes pod's name, a container's id
    lines = [json.loads(line) for line in list(svc.output) if line.startswith("{")]
    assert lines and {line.get("instance") for line in lines} == {host}


def test_readyz_says_what_is_missing_and_how_to_fix_it(svc: ServiceProc) -> None:
    status, _, body = _raw(svc, "GET", "/readyz")
    data = json.loads(body)
    assert data["checks"]["chrome"]["ok"] is True
    assert data["checks"]["fonts"] == {"ok": True, "detail": "Hangul, kana and Han render as text"}
    assert data["checks"]["gemini"]["ok"] is False and "fix" in data["checks"]["gemini"]
    assert status == 503 and data["ready"] is False


def test_metrics_count_calls_by_provider_and_failure_kind(
    svc: ServiceProc, http: LocalServer
) -> None:
    page = http.route("/svc-metrics", Reply("<p>" + "metrics text. " * 40))
    _browse(svc, query=page, action="read", broadcasting=True)
    _browse(svc, query="off air", action="search", broadcasting=False)  # Gemini only
    status, headers, body = _raw(svc, "GET", "/metrics")
    text = body.decode()
    assert status == 200 and headers["content-type"].startswith("text/plain")
    # prometheus_client writes labels in name order (a scraper reads either order); every
    # sample names the instance (the host's name here: SB_INSTANCE is not set)
    me = f'sb_instance="{_instance_of(svc)}"'
    assert f'stream_browser_hops_total{{failure_kind="none",provider="read",{me}}}' in text
    assert (
        f'stream_browser_hops_total{{failure_kind="gemini-cli-missing",provider="gemini",{me}}}'
        in text
    )
    assert f'stream_browser_calls_total{{action="search",outcome="none",{me}}}' in text
    assert f'stream_browser_call_seconds_bucket{{le="+Inf",{me}}}' in text
    assert f"stream_browser_queue_waiting{{{me}}} 0.0" in text
    samples = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert samples and all(me in line for line in samples)
    assert "stream_browser_chrome_reconnects_total" in text
    assert "process_resident_memory_bytes" in text  # what a days-long broadcast is watched by


def test_the_token_never_appears_in_the_service_output(svc: ServiceProc) -> None:
    _raw(svc, "GET", "/v1/status", token="wrong-" + svc.token[:8])
    _raw(svc, "GET", "/v1/status")
    assert svc.events("service.started")
    assert svc.token not in svc.text
    assert svc.token[:12] not in svc.text


# -- a full queue, a drain, a refused start ----------------------------------------------------


def _slow_page(http: LocalServer, name: str, seconds: float) -> str:
    return http.route(f"/{name}", Reply("<p>" + "slow page text. " * 40, delay_s=seconds))


def _call_in_thread(service: ServiceProc, url: str, out: dict[str, Any]) -> threading.Thread:
    def run() -> None:
        status, answer = _browse(service, query=url, action="read", broadcasting=True)
        out["status"], out["answer"] = status, answer

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _running(service: ServiceProc) -> bool:
    status, _, body = _raw(service, "GET", "/v1/status")
    return status == 200 and json.loads(body)["queue"]["running"] is not None


def _waiting(service: ServiceProc) -> int:
    return int(json.loads(_raw(service, "GET", "/v1/status")[2])["queue"]["waiting"])


def test_a_full_queue_answers_429_at_once_and_sigterm_drains_the_line_and_exits_0(
    chrome: ChromeProcess, tmp_path: Path, http: LocalServer
) -> None:
    # a grace well above the 3 s call, however busy the machine (the grace running out is
    # the next test's)
    service = start_service(chrome, tmp_path / "state", SB_QUEUE_MAX="1", SB_STOP_GRACE_S="60")
    try:
        running: dict[str, Any] = {}
        waiting: dict[str, Any] = {}
        a = _call_in_thread(service, _slow_page(http, "q-slow-a", 3.0), running)
        assert wait_until(lambda: _running(service))
        b = _call_in_thread(service, _slow_page(http, "q-slow-b", 0.0), waiting)
        assert wait_until(lambda: _waiting(service) == 1)
        # the line is full: refused at once, not after the 3 s call ahead of it (which is
        # still running when the refusal comes back)
        status, headers, body = _raw(
            service, "POST", "/v1/browse", body=b'{"query": "x", "action": "search"}'
        )
        assert a.is_alive() and "status" not in running
        assert status == 429 and int(headers["retry-after"]) >= 1
        assert json.loads(body)["error"]["kind"] == "queue-full"
        # SIGTERM: the running call finishes, the waiting one and any new one get 503
        service.proc.send_signal(signal.SIGTERM)
        assert wait_until(lambda: service.events("service.draining") != [])
        status, headers, _ = _raw(service, "POST", "/v1/browse", body=b'{"query": "next"}')
        assert status == 503 and headers["retry-after"]
        a.join(30)
        b.join(30)
        assert running["status"] == 200 and running["answer"]["result"]["success"] is True
        assert waiting["status"] == 503
        assert service.proc.wait(30) == 0
        assert cdp_version(chrome.endpoint)  # Chrome keeps running
    finally:
        service.stop()
        close_owned_tab(chrome, tmp_path / "state")


def _browse_in_thread(service: ServiceProc, url: str, out: dict[str, Any]) -> threading.Thread:
    def run() -> None:
        body = json.dumps({"query": url, "action": "read", "broadcasting": True}).encode()
        try:
            out["status"], out["headers"], raw = _raw(service, "POST", "/v1/browse", body=body)
            out["answer"] = json.loads(raw)
        except OSError as exc:  # a cut connection: what the stop grace must prevent
            out["error"] = exc
        out["at"] = time.monotonic()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_sigterm_the_moment_it_says_serving_drains_and_exits_0(tmp_path: Path) -> None:
    """An engine or a script that stops the service as soon as it reports "serving on" gets
    the drain and exit 0, not a process killed by the signal (-15): the line is printed only
    once the signal handlers are in place. Three times, each SIGTERM sent from the thread
    that reads the line."""
    for n in range(3):
        service = start_service(
            None, tmp_path / f"state-{n}", on_ready=lambda proc: proc.send_signal(signal.SIGTERM)
        )
        assert service.proc.wait(30) == 0, (n, service.text[-2000:])
        assert service.events("service.draining"), service.text[-2000:]


def test_a_call_longer_than_the_stop_grace_is_answered_503_shutting_down_before_the_exit(
    chrome: ChromeProcess, tmp_path: Path, http: LocalServer, caplog: pytest.LogCaptureFixture
) -> None:
    """SIGTERM, then the grace (SB_STOP_GRACE_S) runs out: the running call and the one
    waiting behind it get a clean 503 each (the stdlib client: None, the reason logged),
    not a cut connection, and the process exits 0; every line names the instance."""
    service = start_service(
        chrome, tmp_path / "state", SB_STOP_GRACE_S="1", SB_INSTANCE="broadcast-7"
    )
    try:
        assert _instance_of(service) == "broadcast-7"
        running: dict[str, Any] = {}
        a = _browse_in_thread(service, _slow_page(http, "grace-slow-a", 8.0), running)
        assert wait_until(lambda: _running(service))
        waiting: list[dict[str, Any] | None] = []
        b = threading.Thread(
            target=lambda: waiting.append(
                client.browse(
                    action="read",
                    url=_slow_page(http, "grace-slow-b", 0.0),
                    broadcasting=True,
                    timeout=20,
                    service_url=service.url,
                    token=service.token,
                )
            ),
            daemon=True,
        )
        with caplog.at_level("WARNING", logger="stream_browser.client"):
            b.start()
            assert wait_until(lambda: _waiting(service) == 1)
            signalled = time.monotonic()
            service.proc.send_signal(signal.SIGTERM)
            a.join(15)
            b.join(15)
        assert "error" not in running, running
        assert running["status"] == 503 and int(running["headers"]["retry-after"]) >= 1
        error = running["answer"]["error"]
        assert error["kind"] == "service-unavailable"
        assert "shutting down" in error["message"] and "SB_STOP_GRACE_S=1" in error["message"]
        assert 1.0 <= running["at"] - signalled < 5.0  # at the grace, long before the page
        assert waiting == [None]
        assert "shutting down" in caplog.text
        assert service.proc.wait(15) == 0
        assert service.events("service.stop_grace_over")
        lines = [json.loads(line) for line in list(service.output) if line.startswith("{")]
        assert {line.get("instance") for line in lines} == {"broadcast-7"}
    finally:
        service.stop()
        close_owned_tab(chrome, tmp_path / "state")


def test_listening_beyond_loopback_without_an_explicit_token_is_refused(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "search",
            "--env-file",
            "/nonexistent",
            "serve",
            "--host",
            "0.0.0.0",
        ],
        cwd=ROOT,
        env=clean_env(SB_STATE_DIR=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "SB_SERVICE_TOKEN" in result.stderr and "0.0.0.0" in result.stderr
    assert not (tmp_path / "service-token").exists()


def test_the_client_finds_the_service_from_the_environment(
    svc: ServiceProc, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SB_SERVICE_URL", svc.url)
    monkeypatch.setenv("SB_STATE_DIR", str(svc.state_dir))  # the token file
    answer = client.request("GET", "/v1/status")
    assert answer is not None and answer[0] == 200
    assert os.environ.get("SB_SERVICE_TOKEN") is None


# -- start-up pieces, in process ----------------------------------------------------------------


def test_the_token_is_made_once_private_and_reused(tmp_path: Path) -> None:
    settings = build_settings(state_dir=str(tmp_path / "state"))
    token, source = ensure_token(settings)
    again, _ = ensure_token(settings)
    assert token == again and len(token) >= 32 and source.endswith("service-token")
    assert stat.S_IMODE((tmp_path / "state").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "state" / "service-token").stat().st_mode) == 0o600


def test_a_state_folder_made_earlier_with_0755_becomes_0700(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    os.chmod(state, 0o755)  # as Chrome's profile or an older version left it
    ensure_token(build_settings(state_dir=str(state)))
    assert stat.S_IMODE(state.stat().st_mode) == 0o700


def test_an_explicit_token_wins_and_no_file_is_written(tmp_path: Path) -> None:
    settings = build_settings(state_dir=str(tmp_path), service_token="s" * 40)
    assert ensure_token(settings) == ("s" * 40, "SB_SERVICE_TOKEN")
    assert not (tmp_path / "service-token").exists()


def test_a_busy_port_is_refused_with_what_to_do(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        settings = build_settings(state_dir=str(tmp_path), service_port=busy.getsockname()[1])
        with pytest.raises(StartRefused, match="SB_SERVICE_PORT"):
            bind(settings)


@pytest.mark.parametrize(
    ("host", "port", "accepted", "refused"),
    [
        ("127.0.0.1", 8765, ["127.0.0.1:8765", "localhost:8765", "LOCALHOST"], ["evil:8765"]),
        ("::1", 9000, ["[::1]:9000", "localhost:9000"], ["[::2]:9000", "127.0.0.1.evil:9000"]),
    ],
)
def test_the_host_check_accepts_only_names_of_the_bound_address(
    host: str, port: int, accepted: list[str], refused: list[str]
) -> None:
    access = Access("t", allowed_hosts(host, port))
    assert all(access.host_ok(name) for name in accepted)
    assert not any(access.host_ok(name) for name in refused)
    assert allowed_hosts("0.0.0.0", port) is None  # a wildcard bind: the token decides
