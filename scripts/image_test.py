"""The container image, run as its users run it (`make image-test`; minutes, so not in `make test`).

Two containers of the built image (`make image`), started with a token on free non-default
ports and stopped as a user would: one published on loopback (`-p 127.0.0.1:P:P`), one on
the host's network with a page served from the host and allowed (`SB_ALLOW_HOSTS`). Calls go
through the standard-library client; a long call must survive `stop`; nothing may be left
running. The last test runs the fast tests inside the image, on the image's own Python.

Skipped, with what to run, when there is no engine, no base image or no image. All traffic
stays on loopback: the internal address is refused by the service before any connection.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import threading
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from browser_core.testing import free_port
from search import client

ROOT = Path(__file__).resolve().parents[1]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
IMAGE = os.environ.get("IMAGE") or "stream-browser"
BASE_IMAGE = os.environ.get("BASE_IMAGE") or "docker.io/library/debian:trixie-slim"
APP = "/opt/stream-browser"
START_S = 120.0  # Chrome on Xvfb and the service, on 2 busy cores
SLOW_S = 12.0  # longer than docker's/podman's default 10 s stop timeout
ARTICLE_SENTENCE = "The container read this sentence from a page its host served."
FAST_TESTS = (  # the image's Python on the parts that differ between versions
    "tests/test_settings.py",
    "tests/test_policy.py",
    "tests/test_ranges.py",
    "tests/test_envelope.py",
    "tests/test_lookalike.py",
    "tests/test_language.py",
    "tests/test_parsers_google.py",
    "tests/test_parsers_youtube.py",
    "tests/test_parsers_article.py",
    "tests/test_routing.py",
    "tests/test_client.py",
    "tests/test_egress.py",
    "tests/test_recordings.py",
)
# A wall-clock assertion, which the shared 2-core machine's load decides, not the Python.
DESELECTED = (
    "tests/test_parsers_google.py::test_parse_serp_should_take_well_under_200_ms_on_a_2_mb_page",
)


def _engine() -> str | None:
    named = os.environ.get("ENGINE")
    if named:
        return named
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "info"], capture_output=True, timeout=30, check=False)
        if probe.returncode == 0:
            return "docker"
    return "podman" if shutil.which("podman") else None


ENGINE = _engine()


def engine(*args: str, timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess[str]:
    assert ENGINE is not None
    done = subprocess.run(
        [ENGINE, *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"{ENGINE} {' '.join(args)}: exit {done.returncode}\n{done.stderr}")
    return done


def _image_exists(name: str) -> bool:
    return engine("image", "inspect", name, check=False).returncode == 0


@pytest.fixture(scope="module", autouse=True)
def _image() -> None:
    if ENGINE is None:
        pytest.skip("no container engine: install podman (apt-get install podman) or docker")
    if not _image_exists(IMAGE):
        if not _image_exists(BASE_IMAGE):
            pytest.skip(f"no {BASE_IMAGE} and no {IMAGE}: run make base-image && make image")
        pytest.skip(f"no {IMAGE} image: run make image")


# -- a host web server (loopback), and the containers ------------------------------------------


class _Pages(http.server.BaseHTTPRequestHandler):
    seen: list[str] = []  # noqa: RUF012 (one server per module)
    slow_started = threading.Event()

    def do_GET(self) -> None:
        type(self).seen.append(self.path)
        if self.path.startswith("/slow"):
            type(self).slow_started.set()
            time.sleep(SLOW_S)
        body = (
            "<!doctype html><html lang=en><head><title>Host page</title></head><body><article>"
            f"<h1>Host page</h1><p>{ARTICLE_SENTENCE}</p>"
            + "<p>Plain paragraphs make a page worth reading for the extractor.</p>" * 8
            + "</article></body></html>"
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def host_pages() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@dataclass
class Container:
    name: str
    port: int
    token: str
    started_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def logs(self) -> str:
        done = engine("logs", self.name, check=False)
        return done.stdout + done.stderr

    def state(self) -> dict[str, Any]:
        done = engine("inspect", "--format", "{{json .State}}", self.name, check=False)
        return json.loads(done.stdout) if done.returncode == 0 else {}

    def get(self, path: str, *, auth: bool = True) -> tuple[int, dict[str, Any]]:
        headers = {"Authorization": f"Bearer {self.token}"} if auth else {}
        request = urllib.request.Request(self.url + path, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=15) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            with exc:
                return exc.code, json.loads(exc.read())


def _start(
    name: str, port: int, token: str, *args: str, stop_timeout: int | None = 60
) -> Container:
    """`run -d` the image (no --rm: its exit code is read after `stop`), ready when it serves.
    With a `stop_timeout` the service's stop grace is 5 s shorter; without, both are the
    defaults (the engine's 10 s, SB_STOP_GRACE_S's 8 s)."""
    engine("rm", "-f", name, check=False)
    stopping = () if stop_timeout is None else (
        "--stop-timeout", str(stop_timeout), "-e", f"SB_STOP_GRACE_S={stop_timeout - 5}",
    )  # fmt: skip
    engine(
        "run", "-d", "--name", name, *stopping,
        "-e", f"SB_SERVICE_TOKEN={token}", "-e", f"SB_SERVICE_PORT={port}",
        *args, IMAGE,
    )  # fmt: skip
    box = Container(name, port, token)
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        logs = box.logs()
        if "serving on" in logs:
            box.started_s = START_S - (deadline - time.monotonic())
            return box
        if box.state().get("Status") == "exited":
            _remove(name)
            raise AssertionError(f"{name} exited at start:\n{logs}")
        time.sleep(0.5)
    logs = box.logs()
    _remove(name)
    raise AssertionError(f"{name} did not serve within {START_S:.0f} s:\n{logs}")


def _remove(name: str) -> None:
    engine("rm", "-f", "-t", "2", name, check=False, timeout=90)


def _host_processes_of(container_id: str) -> list[str]:
    """Host processes whose command line names the container (conmon, a runtime, a shim)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if container_id in cmdline:
                found.append(f"{proc.name}: {cmdline[:120]}")
    return found


def _stop_and_check_nothing_is_left(box: Container) -> dict[str, Any]:
    container_id = engine("inspect", "--format", "{{.Id}}", box.name).stdout.strip()
    begun = time.monotonic()
    engine("stop", box.name, timeout=120)
    stopped_in = time.monotonic() - begun
    state = box.state()
    engine("rm", box.name)
    leftovers = engine("ps", "-a", "-q", "--filter", f"name=^{box.name}$").stdout.strip()
    assert not leftovers, f"{box.name} is still listed after stop and rm"
    time.sleep(1.0)
    assert _host_processes_of(container_id) == []
    return {"exit_code": state.get("ExitCode"), "stopped_in": stopped_in, "state": state}


@pytest.fixture(scope="module")
def published() -> Iterator[Container]:
    """The README's way: published on loopback, no Gemini login, recordings mounted."""
    port = free_port()
    name = f"sb-image-test-{secrets.token_hex(3)}"
    box = _start(
        name, port, secrets.token_hex(32),
        "-p", f"127.0.0.1:{port}:{port}",
        "-v", f"{ROOT / 'tests' / 'recordings'}:{APP}/tests/recordings:ro",
    )  # fmt: skip
    yield box
    _remove(name)


def _hold_abstract_x_sockets(numbers: range) -> list[socket.socket]:
    """Stand-ins for the host's X servers: the abstract sockets a container on the host's
    network shares."""
    held = []
    for number in numbers:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(f"\0/tmp/.X11-unix/X{number}")
        except OSError:  # a real X server of the host holds it already: just as good
            sock.close()
            continue
        sock.listen(1)
        held.append(sock)
    return held


@pytest.fixture(scope="module")
def on_host_network(host_pages: int) -> Iterator[Container]:
    """--network=host, the host's X displays :0 and :1 taken, a page of the host allowed, and
    Gemini by API key against a closed loopback port (never the internet)."""
    held = _hold_abstract_x_sockets(range(2))
    port = free_port()
    name = f"sb-image-test-host-{secrets.token_hex(3)}"
    try:
        box = _start(
            name, port, secrets.token_hex(32),
            "--network=host",
            "-e", "SB_SERVICE_HOST=127.0.0.1",
            "-e", f"SB_ALLOW_HOSTS=127.0.0.1:{host_pages}",
            "-e", "GEMINI_AUTH=apikey", "-e", "GEMINI_API_KEY=not-a-real-key-for-tests",
            "-e", f"GEMINI_API_BASE=http://127.0.0.1:{free_port()}",
        )  # fmt: skip
        yield box
    finally:
        _remove(name)
        for sock in held:
            sock.close()


def _chrome_processes(box: Container) -> list[str]:
    script = (
        "import pathlib\n"
        "for p in pathlib.Path('/proc').glob('[0-9]*'):\n"
        "    try: c = (p / 'cmdline').read_bytes().replace(b'\\0', b' ').decode()\n"
        "    except OSError: continue\n"
        "    if 'chromium' in c.split(' ')[0]: print(c)\n"
    )
    return engine("exec", box.name, "python3", "-c", script).stdout.splitlines()


# -- the container published on loopback -------------------------------------------------------


def test_the_image_keeps_its_healthcheck_and_runs_as_an_unprivileged_user() -> None:
    config = json.loads(engine("image", "inspect", IMAGE).stdout)[0]
    healthcheck = (config.get("Config") or {}).get("Healthcheck") or config.get("Healthcheck")
    assert healthcheck and "stream-browser-healthcheck" in " ".join(healthcheck["Test"])
    assert (config.get("Config") or {}).get("User") == "stream-browser"


def test_the_image_is_labelled_with_the_version_its_source_and_licence() -> None:
    config = json.loads(engine("image", "inspect", IMAGE).stdout)[0]
    labels = (config.get("Config") or {}).get("Labels") or config.get("Labels") or {}
    assert labels.get("org.opencontainers.image.version") == VERSION, labels
    assert labels.get("org.opencontainers.image.licenses") == "MIT", labels
    assert "org.opencontainers.image.source" in labels, labels  # the git remote, if any


def test_it_serves_healthz_and_readyz_on_a_non_default_port_with_the_token(
    published: Container,
) -> None:
    assert published.port != 8765
    health = {"ok": True, "draining": False, "version": VERSION}
    assert published.get("/healthz", auth=False) == (200, health)
    assert published.get("/readyz", auth=False)[0] == 401
    status, ready = published.get("/readyz")
    checks = ready["checks"]
    assert checks["chrome"]["ok"] and checks["egress"]["ok"], checks
    # No Gemini login is mounted: not ready, saying why, as the entrypoint warned at start.
    gemini = checks["gemini"]
    assert status == 503 and not gemini["ok"] and "GEMINI_OAUTH_DIR" in gemini["fix"]
    assert "no Gemini login is seeded" in published.logs()


def test_the_healthcheck_reads_the_configured_port(published: Container) -> None:
    if ENGINE == "podman":
        done = engine("healthcheck", "run", published.name, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        return
    deadline = time.monotonic() + 90  # docker runs it on its own schedule
    while time.monotonic() < deadline:
        health = published.state().get("Health", {}).get("Status")
        if health in {"healthy", "unhealthy"}:
            break
        time.sleep(2)
    assert health == "healthy"


def test_chrome_runs_in_its_own_sandbox_as_a_user_or_the_log_says_why_not(
    published: Container,
) -> None:
    assert engine("exec", published.name, "id", "-u").stdout.strip() == "10001"
    chrome = _chrome_processes(published)
    assert chrome, "no chromium process in the container"
    unsandboxed = any("--no-sandbox" in line for line in chrome)
    warned = "Chrome's sandbox is unavailable" in published.logs()
    assert unsandboxed == warned
    if ENGINE == "podman":  # podman's default seccomp profile allows user namespaces
        assert not unsandboxed


def test_an_internal_address_is_refused_before_anything_connects(published: Container) -> None:
    metadata = "http://169.254.169.254/latest/meta-data/"
    answer = client.browse(
        action="read",
        url=metadata,
        broadcasting=True,
        timeout=40,
        service_url=published.url,
        token=published.token,
    )
    assert answer is not None, "the service did not answer"
    # Refused by the navigation policy: no provider ran, so nothing connected to it.
    hops = [(hop["provider"], hop["failure_kind"]) for hop in answer["chain"]]
    assert hops == [("policy", "blocked-url")]
    result = answer["result"]
    assert result["success"] is False and result["failure_kind"] == "refused"
    assert "refused to open 169.254.169.254" in result["reply_text"]
    assert "SB_ALLOW_HOSTS" in result["reply_text"]


def test_a_recording_replays_inside_the_container(published: Container) -> None:
    case = ROOT / "tests" / "recordings" / "google-crow-names-en"
    action = json.loads((case / "action.json").read_text())
    done = engine(
        "exec", published.name, "stream-browser", "search", action["arg"],
        "--replay", case.name, "--json", timeout=120,
    )  # fmt: skip
    data = json.loads(done.stdout)
    expected = json.loads((case / "expected.json").read_text())["result"]["data"]
    got = [(r["rank"], r["title"], r["url"]) for r in data["results"]]
    assert got == [(r["rank"], r["title"], r["url"]) for r in expected["results"]]


def test_stop_drains_exits_zero_and_leaves_nothing(published: Container) -> None:
    result = _stop_and_check_nothing_is_left(published)
    assert result["exit_code"] == 0, published.extra
    assert result["stopped_in"] < 30


# -- the container on the host's network -------------------------------------------------------


def test_on_the_hosts_network_xvfb_avoids_the_hosts_displays(on_host_network: Container) -> None:
    found = re.search(r"Xvfb on display :(\d+)", on_host_network.logs())
    assert found and int(found.group(1)) >= 2, on_host_network.logs()
    assert _chrome_processes(on_host_network)


def test_on_the_hosts_network_the_service_is_ready_and_reads_an_allowed_host_page(
    on_host_network: Container, host_pages: int
) -> None:
    status, ready = on_host_network.get("/readyz")
    assert status == 200 and ready["ready"], ready
    result = client.browse_and_search(
        "",
        action="read",
        url=f"http://127.0.0.1:{host_pages}/article",
        broadcasting=True,
        timeout=40,
        service_url=on_host_network.url,
        token=on_host_network.token,
    )
    assert result is not None and result["provider"] == "read"
    assert ARTICLE_SENTENCE in result["reply_text"]
    assert "UNTRUSTED" in result["reply_text"]


def test_on_the_hosts_network_a_cdp_port_the_host_uses_is_refused(host_pages: int) -> None:
    name = f"sb-image-test-cdp-{secrets.token_hex(3)}"
    try:
        done = engine(
            "run", "--name", name, "--network=host", "-e", f"CDP_PORT={host_pages}",
            "-e", f"SB_SERVICE_TOKEN={secrets.token_hex(32)}",
            "-e", f"SB_SERVICE_PORT={free_port()}", "-e", "SB_SERVICE_HOST=127.0.0.1",
            IMAGE, timeout=120, check=False,
        )  # fmt: skip
    finally:
        _remove(name)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"something already listens on 127.0.0.1:{host_pages} (CDP_PORT)" in done.stderr


def test_stop_during_a_long_call_lets_it_finish_then_exits_zero(
    on_host_network: Container, host_pages: int
) -> None:
    answers: list[dict[str, Any] | None] = []
    call = threading.Thread(
        target=lambda: answers.append(
            client.browse_and_search(
                "",
                action="read",
                url=f"http://127.0.0.1:{host_pages}/slow",
                broadcasting=True,
                timeout=60,
                service_url=on_host_network.url,
                token=on_host_network.token,
            )
        )
    )
    begun = time.monotonic()
    call.start()
    assert _Pages.slow_started.wait(30), "the slow page was never requested"
    result = _stop_and_check_nothing_is_left(on_host_network)
    call.join(60)
    assert answers and answers[0] is not None, on_host_network.extra
    assert ARTICLE_SENTENCE in answers[0]["reply_text"]
    assert time.monotonic() - begun >= SLOW_S  # longer than the engines' default 10 s
    assert result["exit_code"] == 0


def _post_browse(box: Container, url: str, out: dict[str, Any]) -> None:
    """A read through plain `http.client`: the status, Retry-After and body as they came, or
    the error of a cut connection."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", box.port, timeout=60)
    body = json.dumps({"query": "", "action": "read", "url": url, "broadcasting": True})
    headers = {"Authorization": f"Bearer {box.token}", "Content-Type": "application/json"}
    try:
        conn.request("POST", "/v1/browse", body=body, headers=headers)
        response = conn.getresponse()
        out.update(status=response.status, retry_after=response.getheader("Retry-After"))
        out["answer"] = json.loads(response.read())
    except (OSError, http.client.HTTPException) as exc:
        out["error"] = repr(exc)
    finally:
        out["at"] = time.monotonic()
        conn.close()


def test_a_call_longer_than_the_engines_default_stop_timeout_is_answered_503_not_cut(
    host_pages: int,
) -> None:
    """`stop` with the engine's default 10 s and the service's default grace (8 s): the call
    still running then gets a clean 503 "shutting down" before the kill, and the exit is 0."""
    port = free_port()
    name = f"sb-image-test-stop-{secrets.token_hex(3)}"
    try:
        box = _start(
            name, port, secrets.token_hex(32), "--network=host",
            "-e", "SB_SERVICE_HOST=127.0.0.1", "-e", f"SB_ALLOW_HOSTS=127.0.0.1:{host_pages}",
            "-e", f"CDP_PORT={free_port()}",
            "-e", "GEMINI_AUTH=apikey", "-e", "GEMINI_API_KEY=not-a-real-key-for-tests",
            "-e", f"GEMINI_API_BASE=http://127.0.0.1:{free_port()}",
            stop_timeout=None,
        )  # fmt: skip
        _Pages.slow_started.clear()
        out: dict[str, Any] = {}
        url = f"http://127.0.0.1:{host_pages}/slow-default-stop"
        call = threading.Thread(target=_post_browse, args=(box, url, out), daemon=True)
        call.start()
        assert _Pages.slow_started.wait(30), "the slow page was never requested"
        result = _stop_and_check_nothing_is_left(box)
        call.join(30)
    finally:
        _remove(name)
    assert "error" not in out, out  # no cut connection
    assert out["status"] == 503 and int(out["retry_after"]) >= 1, out
    error = out["answer"]["error"]
    assert error["kind"] == "service-unavailable" and "shutting down" in error["message"]
    assert "SB_STOP_GRACE_S=8" in error["message"]
    assert result["stopped_in"] < 10.5 and result["exit_code"] == 0, result


# -- the suite's fast tests on the image's Python ----------------------------------------------


def test_the_fast_tests_pass_on_the_images_python() -> None:
    tag = f"{IMAGE}-tests"
    build = [
        "build", "-q", "-f", str(ROOT / "deploy" / "Dockerfile.tests"),
        "--build-arg", f"IMAGE={IMAGE}", "-t", tag,
    ]  # fmt: skip
    if ENGINE == "podman":
        build += ["--format", "docker"]
    bundle = os.environ.get("CA_BUNDLE", "/etc/ssl/certs/ca-certificates.crt")
    if bundle and Path(bundle).is_file():
        build += ["--secret", f"id=ca_bundle,src={bundle}"]
    engine(*build, str(ROOT), timeout=900)
    name = f"sb-image-test-suite-{secrets.token_hex(3)}"
    try:
        done = engine(
            "run", "--name", name, "--entrypoint", "python",
            *(f"-v={ROOT / tree}:{APP}/{tree}:ro" for tree in ("tests", "scripts", "bench")),
            tag, "-m", "pytest", "-q", "-m", "not slow", *FAST_TESTS,
            *(f"--deselect={test}" for test in DESELECTED),
            timeout=900, check=False,
        )  # fmt: skip
    finally:
        _remove(name)
    tail = "\n".join((done.stdout + done.stderr).splitlines()[-25:])
    assert done.returncode == 0, tail
    summary = re.search(r"^=* ?(\d+ passed.*?) ?=*$", tail, re.M)
    assert summary, tail
    version = engine("run", "--rm", "--entrypoint", "python", tag, "--version").stdout.strip()
    print(f"\nfast tests on the image's {version}: {summary.group(1)}")
