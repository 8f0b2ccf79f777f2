"""Deployment files: the container entrypoint's logic (run for real with a stand-in
`stream-browser`), its health check, and the systemd unit, Dockerfile and compose file
keeping what the service needs.

The image itself is built and run by `make image-test` (scripts/image_test.py, minutes);
here the Dockerfile is checked as text and the entrypoint is executed.
"""

from __future__ import annotations

import http.server
import importlib.metadata
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from browser_core.testing import free_port

ROOT = Path(__file__).resolve().parents[1]
ENTRYPOINT = ROOT / "deploy" / "entrypoint.sh"


def _entrypoint(
    tmp_path: Path, *args: str, dry_run: bool = True, **env: str
) -> subprocess.CompletedProcess[str]:
    fake = tmp_path / "bin" / "stream-browser"
    fake.parent.mkdir(exist_ok=True)
    seen = (
        'echo "SB_CHROME_BINARY=${SB_CHROME_BINARY:-} DISPLAY=${DISPLAY:-} '
        'SB_SERVICE_TOKEN=${SB_SERVICE_TOKEN:-}"'
    )
    fake.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/calls\n{seen} >> {tmp_path}/env\n')
    fake.chmod(0o755)
    base = {
        "PATH": f"{tmp_path / 'stand-ins'}:{os.environ['PATH']}",
        "HOME": str(tmp_path / "home"),
        "SB_APP_DIR": str(tmp_path / "app"),
        "SB_BIN": str(fake),
        "SB_PORT_FILE": str(tmp_path / "service-port"),
        "SB_ENTRYPOINT_DRY_RUN": "1" if dry_run else "",
        # A display and a CDP port of the test's own: no Xvfb started, no host Chrome seen.
        "DISPLAY": ":99",
        "CDP_PORT": str(free_port()),
    }
    return subprocess.run(
        ["sh", str(ENTRYPOINT), *args],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=30,
    )


def _seed(folder: Path) -> Path:
    (folder / ".gemini").mkdir(parents=True)
    (folder / ".gemini" / "oauth_creds.json").write_text("{}")
    return folder


def test_oauth_without_a_seeded_login_warns_and_says_where_to_put_one(tmp_path: Path) -> None:
    result = _entrypoint(tmp_path)
    assert result.returncode == 0
    assert "no Gemini login is seeded" in result.stderr
    assert "GEMINI_OAUTH_DIR" in result.stderr and "docker/gemini-oauth" in result.stderr
    assert "would run: " in result.stdout and "stream-browser chrome" in result.stdout
    assert "serve" in result.stdout.splitlines()[-1]


@pytest.mark.parametrize("where", ["bind-mount", "GEMINI_OAUTH_DIR", "home"])
def test_a_seeded_login_anywhere_the_cli_looks_silences_the_warning(
    tmp_path: Path, where: str
) -> None:
    env = {}
    if where == "bind-mount":
        _seed(tmp_path / "app" / "docker" / "gemini-oauth")
    elif where == "GEMINI_OAUTH_DIR":
        env["GEMINI_OAUTH_DIR"] = str(_seed(tmp_path / "elsewhere"))
    else:
        _seed(tmp_path / "home")
    result = _entrypoint(tmp_path, dry_run=True, **env)
    assert result.returncode == 0 and "Gemini login" not in result.stderr


def test_apikey_mode_needs_no_login(tmp_path: Path) -> None:
    result = _entrypoint(tmp_path, GEMINI_AUTH="APIKEY")  # any case, like the service
    assert result.returncode == 0, result.stderr
    assert "Gemini login" not in result.stderr
    # and it goes on as usual: Chrome, then the service
    assert "would run: " in result.stdout and "stream-browser chrome" in result.stdout
    assert result.stdout.splitlines()[-1].startswith("would exec: ")
    assert "serve" in result.stdout.splitlines()[-1]


def test_broadcasting_disabled_starts_no_chrome(tmp_path: Path) -> None:
    result = _entrypoint(tmp_path, STREAM_BROWSER="false", GEMINI_AUTH="apikey")
    assert "chrome" not in result.stdout and "serve" in result.stdout
    assert "STREAM_BROWSER=false" in result.stderr


def test_listening_beyond_loopback_without_a_token_is_pointed_out(tmp_path: Path) -> None:
    result = _entrypoint(tmp_path, SB_SERVICE_HOST="0.0.0.0", GEMINI_AUTH="apikey")
    assert "SB_SERVICE_TOKEN" in result.stderr
    quiet = _entrypoint(
        tmp_path, SB_SERVICE_HOST="0.0.0.0", SB_SERVICE_TOKEN="t" * 40, GEMINI_AUTH="apikey"
    )
    assert "SB_SERVICE_TOKEN" not in quiet.stderr


def _stand_in(tmp_path: Path, name: str, script: str) -> None:
    """A command the entrypoint runs (`unshare`, `id`), first on its PATH."""
    path = tmp_path / "stand-ins" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)


def _as_user(tmp_path: Path, *, user_namespaces: bool) -> None:
    _stand_in(tmp_path, "id", "echo 10001")
    _stand_in(tmp_path, "unshare", "exit 0" if user_namespaces else "echo refused >&2; exit 1")


def test_for_real_it_starts_chrome_then_execs_the_service_with_the_arguments(
    tmp_path: Path,
) -> None:
    _as_user(tmp_path, user_namespaces=True)
    result = _entrypoint(tmp_path, "--port", "9000", dry_run=False, GEMINI_AUTH="apikey")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "calls").read_text().splitlines() == ["chrome", "serve --port 9000"]


@pytest.mark.parametrize(
    ("args", "env", "port"),
    [((), {}, "8765"), ((), {"SB_SERVICE_PORT": "9100"}, "9100"),
     (("--port", "9000"), {"SB_SERVICE_PORT": "9100"}, "9000"), (("--port=9001",), {}, "9001")],
)  # fmt: skip
def test_the_health_check_is_told_the_port_serve_listens_on(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], port: str
) -> None:
    _as_user(tmp_path, user_namespaces=True)
    env = {"SB_SERVICE_PORT": "", **env} if "SB_SERVICE_PORT" in env else env
    result = _entrypoint(tmp_path, *args, dry_run=False, GEMINI_AUTH="apikey", **env)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "service-port").read_text().strip() == port


def test_with_user_namespaces_chrome_keeps_its_own_sandbox(tmp_path: Path) -> None:
    _as_user(tmp_path, user_namespaces=True)
    result = _entrypoint(tmp_path, dry_run=False, GEMINI_AUTH="apikey")
    assert result.returncode == 0, result.stderr
    assert "sandbox" not in result.stderr
    assert (tmp_path / "env").read_text().startswith("SB_CHROME_BINARY= ")


def test_without_user_namespaces_chrome_runs_unsandboxed_and_the_log_says_how_to_fix_it(
    tmp_path: Path,
) -> None:
    _as_user(tmp_path, user_namespaces=False)
    result = _entrypoint(
        tmp_path, dry_run=False, GEMINI_AUTH="apikey", SB_NO_SANDBOX_CHROME="/x/no-sandbox"
    )
    assert result.returncode == 0, result.stderr
    assert "Chrome's sandbox is unavailable" in result.stderr
    assert "--security-opt seccomp=" in result.stderr and "docs/service.md" in result.stderr
    assert (tmp_path / "env").read_text().startswith("SB_CHROME_BINARY=/x/no-sandbox ")


def test_as_root_the_log_says_chrome_has_no_sandbox(tmp_path: Path) -> None:
    _stand_in(tmp_path, "id", "echo 0")
    result = _entrypoint(tmp_path, dry_run=False, GEMINI_AUTH="apikey")
    assert result.returncode == 0, result.stderr
    assert "running as root, so Chrome runs with --no-sandbox" in result.stderr


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        yield listener.getsockname()[1]


def test_a_cdp_port_already_answering_before_chrome_starts_is_refused(
    tmp_path: Path, taken_port: int
) -> None:
    _as_user(tmp_path, user_namespaces=True)
    result = _entrypoint(tmp_path, dry_run=False, GEMINI_AUTH="apikey", CDP_PORT=str(taken_port))
    assert result.returncode == 2
    assert f"something already listens on 127.0.0.1:{taken_port} (CDP_PORT)" in result.stderr
    assert "--network=host" in result.stderr and "CDP_PORT=<a free port>" in result.stderr
    assert not (tmp_path / "calls").exists()  # neither Chrome nor the service was started


def test_a_remote_cdp_endpoint_is_not_mistaken_for_a_host_chrome(
    tmp_path: Path, taken_port: int
) -> None:
    _as_user(tmp_path, user_namespaces=True)
    result = _entrypoint(
        tmp_path,
        dry_run=False,
        GEMINI_AUTH="apikey",
        CDP_PORT=str(taken_port),
        CDP_URL=f"http://127.0.0.1:{taken_port}",
    )
    assert result.returncode == 0, result.stderr


def test_without_a_display_it_starts_xvfb_on_a_display_free_here_and_on_the_host(
    tmp_path: Path,
) -> None:
    result = _entrypoint(tmp_path, GEMINI_AUTH="apikey", DISPLAY="", SB_WINDOW_SIZE="1920,1080")
    assert "would run: Xvfb -displayfd 3 -screen 0 1920x1080x24" in result.stdout


def _healthcheck(
    tmp_path: Path, port: int, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "service-port").write_text(f"{port}\n")
    return subprocess.run(
        [sys.executable, str(ROOT / "deploy" / "healthcheck.py"), *args],
        env={
            **os.environ,
            "SB_PORT_FILE": str(tmp_path / "service-port"),
            "SB_SERVICE_PORT": "1",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_the_health_check_asks_healthz_on_the_port_it_was_told(tmp_path: Path) -> None:
    class Healthz(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200 if self.path == "/healthz" else 404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Healthz)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        assert _healthcheck(tmp_path, server.server_address[1]).returncode == 0
    finally:
        server.shutdown()
        server.server_close()
    closed = _healthcheck(tmp_path, free_port())
    assert closed.returncode == 1 and closed.stderr.startswith("unhealthy: http://127.0.0.1:")


def test_the_token_comes_from_the_file_named_for_this_pod(tmp_path: Path) -> None:
    _as_user(tmp_path, user_namespaces=True)
    tokens = tmp_path / "tokens"
    tokens.mkdir()
    (tokens / "stream-browser-1").write_text("token-of-replica-one\n")
    result = _entrypoint(
        tmp_path,
        dry_run=False,
        GEMINI_AUTH="apikey",
        SB_SERVICE_TOKEN_FILE=str(tokens / "stream-browser-1"),
    )
    assert result.returncode == 0, result.stderr
    assert "SB_SERVICE_TOKEN=token-of-replica-one" in (tmp_path / "env").read_text()
    assert "token-of-replica-one" not in result.stdout + result.stderr


def test_a_replica_without_a_token_key_is_refused_with_how_to_add_one(tmp_path: Path) -> None:
    result = _entrypoint(
        tmp_path,
        GEMINI_AUTH="apikey",
        SB_INSTANCE="stream-browser-2",
        SB_SERVICE_TOKEN_FILE=str(tmp_path / "tokens" / "stream-browser-2"),
    )
    assert result.returncode == 2
    assert "SB_SERVICE_TOKEN_FILE=" in result.stderr and "cannot be read" in result.stderr
    assert "a key named after this pod (stream-browser-2)" in result.stderr
    assert "kubectl create secret generic stream-browser-tokens" in result.stderr


class _Cdp(http.server.BaseHTTPRequestHandler):
    wedged = False

    def do_GET(self) -> None:
        if type(self).wedged:  # a frozen Chrome: the connection is taken, no answer comes
            time.sleep(6)
        self.send_response(200 if self.path in ("/healthz", "/json/version") else 404)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


class _WedgedCdp(_Cdp):
    wedged = True


def test_the_liveness_check_fails_when_chrome_is_wedged_or_gone(tmp_path: Path) -> None:
    service = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Cdp)
    wedged = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _WedgedCdp)
    servers = (service, wedged)
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    port = service.server_address[1]
    try:
        up = _healthcheck(tmp_path, port, "--chrome", CDP_PORT=str(port))
        assert up.returncode == 0, up.stderr
        begun = time.monotonic()
        frozen = _healthcheck(tmp_path, port, "--chrome", CDP_PORT=str(wedged.server_address[1]))
        assert frozen.returncode == 1 and time.monotonic() - begun < 5.5
        assert "the broadcast Chrome does not answer" in frozen.stderr
        gone = _healthcheck(tmp_path, port, "--chrome", CDP_PORT=str(free_port()))
        assert gone.returncode == 1 and "/json/version" in gone.stderr
        # the container's HEALTHCHECK (no --chrome) and a service without Chrome ask no Chrome
        assert _healthcheck(tmp_path, port, CDP_PORT=str(free_port())).returncode == 0
        off = _healthcheck(tmp_path, port, "--chrome", CDP_PORT="1", STREAM_BROWSER="false")
        assert off.returncode == 0, off.stderr
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def _unit(path: Path) -> dict[str, list[tuple[str, str]]]:
    """A systemd unit's sections as (key, value) lines in order, as systemd reads them:
    comment and blank lines skipped, a key may repeat (each `Environment=` line adds)."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] = []
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
            continue
        key, _, value = line.partition("=")
        current.append((key.strip(), value.strip()))
    return sections


def test_the_systemd_unit_drains_on_stop_and_stays_on_loopback() -> None:
    service = _unit(ROOT / "deploy" / "stream-browser.service")["Service"]
    last = dict(service)  # a key set twice: the last line wins (Environment= lines add up)
    assert last["ExecStart"].endswith(" serve")
    assert last["KillMode"] == "mixed" and last["KillSignal"] == "SIGTERM"
    assert int(last["TimeoutStopSec"]) >= 25 + 12  # the call deadline and Gemini's floor
    env = [item for key, value in service if key == "Environment" for item in value.split()]
    hosts = [item.partition("=")[2] for item in env if item.startswith("SB_SERVICE_HOST=")]
    assert hosts and hosts[-1] == "127.0.0.1", hosts
    grace = [item.partition("=")[2] for item in env if item.startswith("SB_STOP_GRACE_S=")]
    assert grace and 25 + 12 <= float(grace[-1]) < int(last["TimeoutStopSec"])


def test_the_dockerfile_runs_chromium_on_xvfb_with_the_entrypoint() -> None:
    text = (ROOT / "deploy" / "Dockerfile").read_text()
    assert "chromium" in text and "xvfb" in text
    assert "stream-browser-entrypoint" in text and "ENTRYPOINT" in text
    assert "stream-browser-healthcheck" in text and "127.0.0.1:8765/healthz" not in text
    assert "playwright install" not in text


def test_the_image_installs_the_tested_versions_as_a_user_with_what_the_screen_needs() -> None:
    text = (ROOT / "deploy" / "Dockerfile").read_text()
    assert "-c constraints.txt" in text and "npm ci" in text
    assert re.search(r"^USER stream-browser$", text, re.M)
    for package in ("fonts-noto-cjk", "fonts-noto-color-emoji"):
        assert package in text
    assert "--mount=type=secret,id=ca_bundle" in text and "COPY /etc/ssl" not in text


def test_the_images_node_tools_are_the_versions_the_makefile_tests() -> None:
    tools = json.loads((ROOT / "deploy" / "tools" / "package.json").read_text())
    lock = json.loads((ROOT / "deploy" / "tools" / "package-lock.json").read_text())
    made = re.search(r"^GEMINI_CLI_VERSION := (\S+)$", (ROOT / "Makefile").read_text(), re.M)
    assert made and tools["dependencies"]["@google/gemini-cli"] == made.group(1)
    locked = lock["packages"]["node_modules/@google/gemini-cli"]["version"]
    assert locked == made.group(1)
    consent = re.search(r"^AUTOCONSENT_VERSION := (\S+)$", (ROOT / "Makefile").read_text(), re.M)
    assert consent and tools["dependencies"]["@duckduckgo/autoconsent"] == consent.group(1)


def test_make_image_labels_the_image_with_the_installed_version_and_the_licence(
    tmp_path: Path,
) -> None:
    # What `make image` would run (-n: print, build nothing), with the engine named so no
    # daemon is asked, and a remote URL that carries a token, which must not reach a label.
    secret = "ghp_not-for-a-label"
    origin = f"https://someone:{secret}@example.org/stream-browser.git"
    git = ["git", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True, timeout=30)
    subprocess.run([*git, "remote", "add", "origin", origin], check=True, timeout=30)
    for name in ("Makefile", "pyproject.toml"):
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    proc = subprocess.run(
        ["make", "-n", "image", "ENGINE=docker", "CA_BUNDLE="],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    version = importlib.metadata.version("stream-browser")
    assert f"--build-arg VERSION={version} " in proc.stdout
    assert "--build-arg SOURCE_URL=https://example.org/stream-browser.git " in proc.stdout
    assert secret not in proc.stdout
    text = (ROOT / "deploy" / "Dockerfile").read_text()
    labels = text[text.index("LABEL org.opencontainers.image") :].split("\n\n", 1)[0]
    assert 'org.opencontainers.image.version="${VERSION}"' in labels
    assert 'org.opencontainers.image.source="${SOURCE_URL}"' in labels
    assert 'org.opencontainers.image.licenses="MIT"' in labels
    # The licence is in the build context and the image (setuptools only warns without it).
    assert "!LICENSE" in (ROOT / ".dockerignore").read_text().splitlines()
    assert re.search(r"^COPY .*\bLICENSE\b.* \./$", text, re.M)


def test_compose_waits_for_a_running_call_before_killing_the_service() -> None:
    text = (ROOT / "deploy" / "compose.yaml").read_text()
    grace = re.search(r"^\s+stop_grace_period: (\d+)s$", text, re.M)
    assert grace and int(grace.group(1)) >= 25 + 12  # the call deadline and Gemini's floor
    # the service answers a call still running before compose's kill, not after it
    stop_grace = re.search(r'^\s+SB_STOP_GRACE_S: "(\d+)"$', text, re.M)
    assert stop_grace and 25 + 12 <= int(stop_grace.group(1)) < int(grace.group(1))
    assert '"127.0.0.1:8765:8765"' in text


def test_the_build_context_leaves_out_local_environments_and_caches() -> None:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    assert lines[lines.index("*") :].count("!.venv/") == 0 and "**/__pycache__" in lines
    assert "!tests/" not in lines and "!.env" not in lines
