"""The Gemini CLI client against a fake `gemini` on a narrowed PATH (gemini/_cli.py)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

import gemini
from browser_core import Settings, ToolExecutionResult, build_settings, parse_envelope
from gemini import _cli
from gemini._cli import CLI_ERROR_PATTERNS, PROJECT_ROOT, build_argv, find_gemini_binary
from gemini._sync import run_sync
from gemini.testing import (
    CLI_ANSWER,
    FAKE_VERSION,
    MAIN_MODEL,
    SESSION_ID,
    FakeBehaviour,
    cli_output,
    fake_calls,
    session_files,
    session_record,
    write_fake_gemini,
)

QUERY = "why is the sky blue?"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No real keys, no real home, a private temp root, and a PATH holding only our bin/."""
    for name in list(os.environ):
        if name.startswith(("GEMINI_", "GOOGLE_")) or name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    home, systmp, bin_dir = tmp_path / "home", tmp_path / "systmp", tmp_path / "bin"
    for folder in (home, systmp, bin_dir):
        folder.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setattr(tempfile, "tempdir", str(systmp))


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    return tmp_path / "bin"


def settings_for(**values: Any) -> Settings:
    return build_settings(**values)


def fake(bin_dir: Path, behaviour: str | FakeBehaviour = "success") -> Path:
    return write_fake_gemini(bin_dir, behaviour)


def ask(settings: Settings, query: str = QUERY) -> gemini.GeminiAnswer:
    return run_sync(gemini.ask_cli(query, settings))


def failure(settings: Settings, query: str = QUERY) -> gemini.GeminiError:
    with pytest.raises(gemini.GeminiError) as info:
        ask(settings, query)
    return info.value


def gone(*pids: int, within_s: float = 2.0) -> bool:
    """SIGKILL is asynchronous: give the kernel a moment to finish the processes off."""
    deadline = time.monotonic() + within_s
    while any(alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def alive(pid: int) -> bool:
    """Running, not a zombie (pid 1 in a container may never reap orphans)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


# --- argv, environment, working directory ------------------------------------------------


def test_argv_is_headless_json_with_skip_trust_and_never_yolo(bin_dir: Path) -> None:
    fake(bin_dir)
    ask(settings_for())
    (call,) = fake_calls(bin_dir)
    assert call["argv"] == ["-p", QUERY, "-o", "json", "--skip-trust"]
    assert not {"--yolo", "-y", "--approval-mode"} & set(call["argv"])


def test_argv_adds_the_model_when_gemini_model_is_set(bin_dir: Path) -> None:
    fake(bin_dir)
    ask(settings_for(gemini_model="gemini-2.5-pro"))
    assert fake_calls(bin_dir)[0]["argv"] == [
        "-p",
        QUERY,
        "-o",
        "json",
        "--skip-trust",
        "-m",
        "gemini-2.5-pro",
    ]


@pytest.mark.parametrize("query", ["--help", "-p", "-o text", "--yolo"])
def test_a_query_starting_with_a_dash_stays_the_prompt_value(bin_dir: Path, query: str) -> None:
    fake(bin_dir)
    ask(settings_for(), query)
    argv = fake_calls(bin_dir)[0]["argv"]
    assert argv == ["--prompt=" + query, "-o", "json", "--skip-trust"]
    assert build_argv("gemini", query)[1] == "--prompt=" + query


def test_child_env_strips_keys_and_display_and_forces_the_account_login(
    bin_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = {
        "GEMINI_API_KEY": "k1",
        "GOOGLE_API_KEY": "k2",
        "GOOGLE_GENAI_API_KEY": "k3",
        "OPENAI_API_KEY": "k4",
        "SB_SERVICE_TOKEN": "k5",
        "GITHUB_TOKEN": "k6",
        "DB_PASSWORD": "k7",
        "GOOGLE_GENAI_USE_VERTEXAI": "true",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("DISPLAY", ":1")
    monkeypatch.setenv("LANG", "C.UTF-8")
    fake(bin_dir)
    ask(settings_for())
    env = fake_calls(bin_dir)[0]["env"]
    assert not set(secrets) & set(env)
    assert "DISPLAY" not in env
    assert not any(value in ("k1", "k2", "k3", "k4", "k5", "k6", "k7") for value in env.values())
    assert env["GOOGLE_GENAI_USE_GCA"] == "true"
    assert env["NO_BROWSER"] == "true"
    assert env["GEMINI_CLI_NO_RELAUNCH"] == "true"
    assert env["LANG"] == "C.UTF-8" and env["PATH"] == str(bin_dir)


def test_runs_in_a_private_empty_dir_outside_the_project_in_its_own_session(bin_dir: Path) -> None:
    fake(bin_dir)
    ask(settings_for())
    call = fake_calls(bin_dir)[0]
    cwd = Path(call["cwd"])
    assert PROJECT_ROOT not in (cwd, *cwd.parents)
    assert cwd.is_relative_to(tempfile.gettempdir())
    assert not any((p / ".env").exists() for p in (cwd, *cwd.parents))
    assert list(cwd.iterdir()) == []
    assert stat.S_IMODE(cwd.parent.stat().st_mode) == 0o700
    assert call["stdin_devnull"] is True
    assert call["pid"] == call["pgid"] == call["sid"]


def test_a_dotenv_above_the_working_dir_is_refused_before_starting(bin_dir: Path) -> None:
    fake(bin_dir)
    (Path(tempfile.gettempdir()) / ".env").write_text("GEMINI_API_KEY=from-dotenv\n")
    error = failure(settings_for())
    assert error.kind == "gemini-cli-error" and ".env" in error.message
    assert fake_calls(bin_dir) == []


# --- finding the binary and the login -----------------------------------------------------


def test_missing_binary_is_gemini_cli_missing_with_the_install_hint(tmp_path: Path) -> None:
    for settings in (settings_for(gemini_cli=str(tmp_path / "nope")), settings_for()):
        error = failure(settings)
        assert error.kind == "gemini-cli-missing"
        assert "npm i -g @google/gemini-cli" in (error.hint or "")
        assert "interactive `gemini`" in (error.hint or "")


def test_binary_lookup_order_is_setting_then_path_then_local_bin(
    tmp_path: Path, bin_dir: Path
) -> None:
    local = write_fake_gemini(tmp_path / "home" / ".local" / "bin")
    assert find_gemini_binary(settings_for()) == local
    on_path = fake(bin_dir)
    assert find_gemini_binary(settings_for()) == on_path
    chosen = write_fake_gemini(tmp_path / "chosen")
    assert find_gemini_binary(settings_for(gemini_cli=str(chosen))) == chosen
    assert find_gemini_binary(settings_for(gemini_cli=str(tmp_path / "gone"))) is None


def _seed(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "oauth_creds.json").write_text("{}")
    return folder


def test_oauth_dir_may_be_the_dot_gemini_folder_or_its_parent(
    tmp_path: Path, bin_dir: Path
) -> None:
    fake(bin_dir)
    seeded = _seed(tmp_path / "login" / ".gemini")
    for configured in (seeded, seeded.parent):
        settings = settings_for(gemini_oauth_dir=str(configured))
        assert gemini.gemini_oauth_ready(settings)
        ask(settings)
        assert fake_calls(bin_dir)[-1]["env"]["GEMINI_CLI_HOME"] == str(seeded.parent)


def test_an_oauth_dir_with_another_name_is_linked_in_as_dot_gemini(
    tmp_path: Path, bin_dir: Path
) -> None:
    fake(bin_dir)
    seeded = _seed(tmp_path / "gemini-oauth")
    settings = settings_for(gemini_oauth_dir=str(seeded))
    assert gemini.gemini_oauth_ready(settings)
    ask(settings)
    home = Path(fake_calls(bin_dir)[0]["env"]["GEMINI_CLI_HOME"])
    assert (home / ".gemini").resolve() == seeded.resolve()
    assert (home / ".gemini" / "oauth_creds.json").is_file()


def test_oauth_ready_looks_in_home_or_gemini_cli_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not gemini.gemini_oauth_ready(settings_for())
    assert not gemini.gemini_oauth_ready(settings_for(gemini_oauth_dir=str(tmp_path / "empty")))
    _seed(tmp_path / "home" / ".gemini")
    assert gemini.gemini_oauth_ready(settings_for())
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "other"))
    assert not gemini.gemini_oauth_ready(settings_for())


# --- outcomes -------------------------------------------------------------------------------


def test_success_takes_the_sources_from_the_runs_session_record_and_the_main_model(
    bin_dir: Path,
) -> None:
    fake(bin_dir)
    answer = ask(settings_for())
    assert answer.text == CLI_ANSWER  # its [1][2] now name the two sources below
    assert answer.auth == "oauth"
    assert answer.model == MAIN_MODEL  # the model in role main, not the router listed first
    assert [(s.title, s.url) for s in answer.sources] == [
        ("en.wikipedia.org", "https://en.wikipedia.org/wiki/Rayleigh_scattering"),
        ("britannica.com", "https://www.britannica.com/science/Rayleigh-scattering"),
    ]
    assert answer.search_queries == [QUERY]


@pytest.mark.parametrize(
    ("behaviour", "kind", "exit_code"),
    [
        ("error-json", "gemini-cli-error", 1),
        ("auth-exit-41", "gemini-auth", 41),
        ("quota", "gemini-quota", 1),
        ("garbage", "gemini-bad-response", 0),
        ("empty", "gemini-cli-error", 0),
        ("untrusted", "gemini-untrusted", 55),
    ],
)
def test_each_canned_behaviour_maps_to_its_failure_kind(
    bin_dir: Path, behaviour: str, kind: str, exit_code: int
) -> None:
    fake(bin_dir, behaviour)
    error = failure(settings_for())
    assert error.kind == kind
    assert error.context.get("exit_code") == exit_code
    assert error.hint


def test_auth_failure_says_how_to_fix_it(bin_dir: Path) -> None:
    fake(bin_dir, "auth-exit-41")
    error = failure(settings_for())
    assert "Manual authorization is required" in error.message
    assert "GEMINI_OAUTH_DIR" in (error.hint or "")
    assert "GEMINI_AUTH=apikey" in (error.hint or "")


@pytest.mark.parametrize(
    ("code", "kind"),
    [(429, "gemini-quota"), (41, "gemini-auth"), (403, "gemini-auth"), (7, "gemini-cli-error")],
)
def test_the_json_error_code_on_stderr_decides_before_text(
    bin_dir: Path, code: int, kind: str
) -> None:
    stderr = (
        '{\n  "session_id": "s",\n  "error": {"type": "Error", '
        f'"message": "something went wrong", "code": {code}}}\n}}\n'
    )
    fake(bin_dir, FakeBehaviour(stderr=stderr, exit_code=code % 256))
    assert failure(settings_for()).kind == kind


# One sample per pattern row; the test below checks the table and the samples stay in step.
PATTERN_SAMPLES = {
    "manual-authorization": "Error authenticating: FatalAuthenticationError: Manual "
    "authorization is required but the current session is "
    "non-interactive.",
    "authentication-error": "FatalAuthenticationError: could not load cached credentials",
    "client-no-longer-supported": "This client is no longer supported for Gemini Code Assist "
    "for individuals.",
    "login-expired": "Error: invalid_grant: Token has been expired or revoked.",
    "login-required": "Please re-authenticate with `gemini` to continue.",
    "login-prompt": "Opening authentication page in your browser. Do you want to continue? [Y/n]: ",
    "quota": "[API Error: Quota exceeded for quota metric 'Requests per day' "
    "(Status: RESOURCE_EXHAUSTED)]",
    "untrusted-folder": "Refusing to run tools in an untrusted folder: /srv/x",
    "model-not-found": "[API Error: model gemini-9-ultra is not found for API version v1beta]",
    "broken-stream": "Error when talking to Gemini API Full report available at: "
    "/tmp/gemini-client-error-Turn.run-sendMessageStream.json SyntaxError: Unterminated "
    "string in JSON at position 43",
    "unavailable": "[API Error: The service is currently overloaded. (Status: UNAVAILABLE)]",
}


def test_every_pattern_row_has_a_sample() -> None:
    assert [name for name, _, _ in CLI_ERROR_PATTERNS] == list(PATTERN_SAMPLES)


@pytest.mark.parametrize(
    ("name", "error_class"), [(name, cls) for name, _, cls in CLI_ERROR_PATTERNS]
)
def test_stderr_pattern_row(bin_dir: Path, name: str, error_class: type) -> None:
    sample = PATTERN_SAMPLES[name]
    first = next(row for row, pattern, _ in CLI_ERROR_PATTERNS if pattern.search(sample))
    assert first == name
    fake(
        bin_dir,
        FakeBehaviour(
            stderr="Warning: 256-color support not detected.\n" + sample + "\n", exit_code=1
        ),
    )
    error = failure(settings_for())
    assert isinstance(error, error_class)
    assert sample[:40] in error.message


def test_an_empty_answer_in_valid_json_is_a_bad_response(bin_dir: Path) -> None:
    fake(bin_dir, FakeBehaviour(stdout='{"session_id": "s", "response": "  "}\n'))
    assert failure(settings_for()).kind == "gemini-bad-response"


def test_an_empty_query_is_refused_before_starting(bin_dir: Path) -> None:
    fake(bin_dir)
    with pytest.raises(ValueError, match="empty"):
        ask(settings_for(), "  ")
    assert fake_calls(bin_dir) == []


# --- timeouts and process groups -------------------------------------------------------------


@pytest.mark.serial  # held to the second: run alone
def test_a_hang_is_killed_at_the_timeout_with_its_whole_process_group(bin_dir: Path) -> None:
    fake(bin_dir, "hang")
    started = time.monotonic()
    error = failure(settings_for(gemini_timeout_s=0.5))
    elapsed = time.monotonic() - started
    assert isinstance(error, gemini.GeminiTimeout) and isinstance(error, TimeoutError)
    assert error.kind == "gemini-timeout"
    assert elapsed < 0.5 + _cli.KILL_GRACE_S + 1.5
    call = fake_calls(bin_dir)[0]
    assert call["child_pid"] is not None
    assert gone(call["pid"], call["child_pid"])


def test_a_cancelled_call_kills_the_process_group_too(bin_dir: Path) -> None:
    fake(bin_dir, "hang")
    settings = settings_for(gemini_timeout_s=30)

    async def scenario() -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(gemini.ask_cli(QUERY, settings), 1.0)

    asyncio.run(scenario())
    call = fake_calls(bin_dir)[0]
    assert gone(call["pid"], call["child_pid"])


# --- the fail-open surface ---------------------------------------------------------------


def test_cli_search_returns_the_envelope_on_success(bin_dir: Path) -> None:
    fake(bin_dir)
    result = gemini.cli_search(QUERY, settings_for())
    assert isinstance(result, ToolExecutionResult)
    assert result.success and result.provider == "gemini-cli" and result.action == "search"
    assert result.query == QUERY
    assert "UNTRUSTED_WEB_EXTRACT" in result.reply_text and "Rayleigh" in result.reply_text
    assert result.data == {"search_queries": [QUERY], "model": MAIN_MODEL}
    assert len(result.sources) == 2
    envelope = parse_envelope(result.reply_text)
    assert envelope.header["sources"].split(" | ") == [s.url for s in result.sources]
    assert "Sources:\n[1] en.wikipedia.org - https://en.wikipedia.org/" in envelope.body


@pytest.mark.parametrize(
    ("behaviour", "kind"),
    [
        ("auth-exit-41", "gemini-auth"),
        ("quota", "gemini-quota"),
        ("garbage", "gemini-bad-response"),
        ("empty", "gemini-cli-error"),
        ("untrusted", "gemini-untrusted"),
    ],
)
def test_cli_search_returns_none_and_logs_the_failure_kind(
    bin_dir: Path, behaviour: str, kind: str
) -> None:
    fake(bin_dir, behaviour)
    with capture_logs() as logs:
        assert gemini.cli_search(QUERY, settings_for()) is None
    (failed,) = [e for e in logs if e["event"] == "gemini.failed"]
    assert failed["failure_kind"] == kind and failed["provider"] == "gemini-cli"
    assert isinstance(failed["elapsed_ms"], int)


def test_cli_search_fails_open_on_a_missing_binary_and_on_unexpected_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert gemini.cli_search(QUERY, settings_for()) is None

    def explode(*_: Any) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(_cli, "find_gemini_binary", explode)
    with capture_logs() as logs:
        assert gemini.cli_search(QUERY, settings_for()) is None
    assert logs[-1]["failure_kind"] == "gemini-internal"


def test_search_and_ask_pick_the_cli_for_oauth(bin_dir: Path) -> None:
    fake(bin_dir)
    settings = settings_for(gemini_auth="oauth")
    result = gemini.search(QUERY, settings)
    assert result is not None and result.provider == "gemini-cli"
    assert run_sync(gemini.ask(QUERY, settings)).auth == "oauth"


def test_the_sync_twin_works_inside_a_running_event_loop(bin_dir: Path) -> None:
    fake(bin_dir)

    async def caller() -> ToolExecutionResult | None:
        return gemini.cli_search(QUERY, settings_for())

    result = asyncio.run(caller())
    assert result is not None and result.provider == "gemini-cli"


def test_a_login_prompt_with_exit_0_and_empty_stdout_is_gemini_auth(bin_dir: Path) -> None:
    """Measured with the real 0.61 CLI when NO_BROWSER is missing: prompt on stderr, exit 0."""
    prompt = "Opening authentication page in your browser. Do you want to continue? [Y/n]: "
    fake(bin_dir, FakeBehaviour(stderr=prompt, exit_code=0))
    assert failure(settings_for()).kind == "gemini-auth"


# --- the run's session record: sources, and nothing left behind ---------------------------

FAILED_WITH_RECORD = FakeBehaviour(
    exit_code=173,  # 429 % 256: the real CLI exits with its error code
    stderr=(
        '{\n  "session_id": "' + SESSION_ID + '",\n  "error": {"type": "Error", "message": '
        '"You have exhausted your daily quota on this model.", "code": 429}\n}\n'
    ),
    session=session_record(CLI_ANSWER)[:3],  # metadata and the question: no answer came
)


def home_of(bin_dir: Path) -> Path:
    return bin_dir.parent / "home"


@pytest.mark.parametrize("behaviour", ["success", FAILED_WITH_RECORD])
def test_the_runs_session_record_is_deleted_once_read(bin_dir: Path, behaviour: Any) -> None:
    fake(bin_dir, behaviour)
    home = home_of(bin_dir)
    before = session_files(home)
    with contextlib.suppress(gemini.GeminiError):
        ask(settings_for())
    assert before == [] and session_files(home) == []
    assert fake_calls(bin_dir)  # the fake ran (and wrote its record) ...
    assert (home / ".gemini" / "tmp" / "cwd" / "chats").is_dir()  # ... where the CLI does


def test_gemini_keep_sessions_true_keeps_the_record(
    bin_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake(bin_dir)
    monkeypatch.setenv("GEMINI_KEEP_SESSIONS", "true")
    settings = build_settings()
    assert settings.gemini_keep_sessions is True
    answer = ask(settings)
    (kept,) = session_files(home_of(bin_dir))
    assert CLI_ANSWER in kept.read_text(encoding="utf-8")
    assert len(answer.sources) == 2


def test_the_record_is_found_and_deleted_in_a_seeded_login_folder(
    tmp_path: Path, bin_dir: Path
) -> None:
    fake(bin_dir)
    seeded = _seed(tmp_path / "gemini-oauth")  # linked in as GEMINI_CLI_HOME/.gemini
    answer = ask(settings_for(gemini_oauth_dir=str(seeded)))
    assert len(answer.sources) == 2
    assert (seeded / "tmp" / "cwd" / "chats").is_dir()
    assert list((seeded / "tmp").glob("*/chats/*")) == []
    assert (seeded / "oauth_creds.json").is_file()  # the login itself is left alone


def test_other_runs_records_are_left_alone(bin_dir: Path) -> None:
    fake(bin_dir)
    chats = home_of(bin_dir) / ".gemini" / "tmp" / "cwd" / "chats"
    chats.mkdir(parents=True)
    other = chats / "session-2026-11-30T08-00-0a1b2c3d.jsonl"
    other.write_text('{"sessionId": "0a1b2c3d-0000-4000-8000-000000000000"}\n')
    ask(settings_for())
    assert session_files(home_of(bin_dir)) == [other]


@pytest.mark.parametrize("behaviour", ["no-record", "changed-record"])
def test_an_unreadable_record_falls_back_to_urls_in_the_text_with_one_warning(
    bin_dir: Path, behaviour: str
) -> None:
    fake(bin_dir, behaviour)
    with capture_logs() as logs:
        answer = ask(settings_for())
    assert answer.text == (
        "Rayleigh scattering makes the sky blue. See "
        "https://en.wikipedia.org/wiki/Rayleigh_scattering."
    )  # the markers named nothing the brain could cite: gone
    assert [s.url for s in answer.sources] == ["https://en.wikipedia.org/wiki/Rayleigh_scattering"]
    assert answer.model == MAIN_MODEL
    (warning,) = [e for e in logs if e["log_level"] == "warning"]
    assert warning["event"] == "gemini.cli.sources_unread"
    assert warning["cli_version"] == FAKE_VERSION and "0.61" in warning["hint"]
    assert session_files(home_of(bin_dir)) == []


def test_markers_that_name_no_source_are_removed(bin_dir: Path) -> None:
    response = "Blue light scatters most [1][3]. Nobody knows why [4]."
    fake(bin_dir, FakeBehaviour(stdout=cli_output(response), session=session_record(response)))
    answer = ask(settings_for())
    assert answer.text == "Blue light scatters most [1]. Nobody knows why."
    assert len(answer.sources) == 2


def test_the_model_is_the_one_of_the_last_main_turn_when_several_served_as_main(
    bin_dir: Path,
) -> None:
    """Flash answered after pro, tried last, failed: both are in role main in the stats;
    the record's last turn says which one answered."""
    payload = json.loads(cli_output(CLI_ANSWER))
    payload["stats"]["models"]["gemini-3.1-pro-preview"] = payload["stats"]["models"][MAIN_MODEL]
    fake(bin_dir, FakeBehaviour(stdout=json.dumps(payload), session=session_record(CLI_ANSWER)))
    assert ask(settings_for()).model == MAIN_MODEL
    assert _cli._model_of(payload["stats"]) == "gemini-3.1-pro-preview"  # stats alone: last


def test_the_cli_error_report_in_the_temp_folder_is_deleted(
    bin_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", tempfile.gettempdir())  # the CLI's os.tmpdir()
    report = Path(tempfile.gettempdir()) / "gemini-client-error-Turn.run-2026-12-01.json"
    report.write_text('{"error": "..."}')
    elsewhere = bin_dir.parent / "gemini-client-error-Turn.run-2026-12-01.json"
    elsewhere.write_text("{}")
    stderr = "".join(
        f"Error when talking to Gemini API Full report available at: {path} SyntaxError: "
        "Unterminated string in JSON at position 43\n"
        for path in (report, elsewhere)
    )
    fake(bin_dir, FakeBehaviour(stderr=stderr, exit_code=1))
    assert failure(settings_for()).kind == "gemini-bad-response"
    assert not report.exists()
    assert elsewhere.exists()  # not the CLI's temp folder: not ours to remove


def test_records_of_runs_killed_at_the_timeout_are_swept_from_our_project_folder(
    bin_dir: Path,
) -> None:
    """A run killed at its timeout never printed its session id: its record is removed by a
    later run once no live run can own it, in the folder registered for our working
    directory only."""
    fake(bin_dir)
    home = home_of(bin_dir) / ".gemini"
    workdir = _cli.private_workdir()
    (home / "tmp").mkdir(parents=True)
    (home / "projects.json").write_text(json.dumps({"projects": {str(workdir): "cwd"}}))
    chats, elsewhere = home / "tmp" / "cwd" / "chats", home / "tmp" / "user-project" / "chats"
    records = {}
    for name, folder, age_s in [
        ("stale", chats, 700),
        ("live", chats, 30),
        ("user", elsewhere, 700),
    ]:
        folder.mkdir(parents=True, exist_ok=True)
        sid = f"{name:0<8}-0000-4000-8000-000000000000"
        path = folder / f"session-2026-12-01T08-00-{sid[:8]}.jsonl"
        path.write_text(json.dumps({"sessionId": sid}) + "\n")
        os.utime(path, (time.time() - age_s, time.time() - age_s))
        records[name] = path
    ask(settings_for())
    assert session_files(home.parent) == sorted([records["live"], records["user"]])


def test_the_cli_version_in_the_warning_comes_from_its_npm_package_without_running_it(
    tmp_path: Path,
) -> None:
    package = tmp_path / "node_modules" / "@google" / "gemini-cli"
    (package / "bundle").mkdir(parents=True)
    (package / "package.json").write_text('{"name": "@google/gemini-cli", "version": "9.8.7"}')
    script = package / "bundle" / "gemini.js"
    script.write_text('#!/bin/sh\necho started >> "$0.ran"\n')
    script.chmod(0o755)
    link = tmp_path / "node_modules" / ".bin" / "gemini"
    link.parent.mkdir()
    link.symlink_to(script)
    version = run_sync(_cli.cli_version(link, env={}, cwd=tmp_path))
    assert version == "9.8.7"
    assert not Path(f"{script}.ran").exists()


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A TMPDIR of the test's own, so the CLI's private folder is made there."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    return folder


def test_a_read_only_seeded_login_is_copied_into_a_private_home_the_cli_can_write(
    tmp_path: Path, private_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The container mounts the login read-only; the real CLI 0.61 then fails before any call
    # (EACCES on projects.json). Root ignores permission bits, so the read-only mount is told
    # to the code through os.access, the one thing that cannot run here as it does there.
    seeded = _seed(tmp_path / "gemini-oauth" / ".gemini")
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda path, mode: Path(path) != seeded and real_access(path, mode)
    )
    home = _cli.cli_home(settings_for(gemini_oauth_dir=str(seeded)))
    assert home is not None and home.is_relative_to(private_tmp)
    copy = home / ".gemini" / "oauth_creds.json"
    assert copy.read_text() == (seeded / "oauth_creds.json").read_text()
    assert copy.stat().st_mode & 0o777 == 0o600
    assert not (home / ".gemini").is_symlink()  # the CLI writes here, not into the seed


def test_the_private_copy_of_a_login_follows_a_newer_seed(
    tmp_path: Path, private_tmp: Path
) -> None:
    seeded = _seed(tmp_path / "seed")
    _cli.writable_home(seeded)
    (seeded / "oauth_creds.json").write_text('{"refresh_token": "newer"}')
    later = time.time() + 5
    os.utime(seeded / "oauth_creds.json", (later, later))
    home = _cli.writable_home(seeded)
    assert "newer" in (home / ".gemini" / "oauth_creds.json").read_text()
