"""Two broadcasts under `podman kube play`, from deploy/kubernetes/ (`make kube-test`; minutes,
so not in `make test`).

podman runs no StatefulSet: scripts/kube_pods.py makes its pod template into the Pods of
replicas 0 and 1 (one source), each published on its own loopback port. Each must answer a
read through the standard-library client and name itself in /v1/status, /metrics and its log;
each has its own Chrome and its own display (reachable on the display socket a screen-share
sidecar would mount); a wedged, then killed Chrome fails its liveness check while the other
broadcast goes on answering; stopped as the kubelet stops a pod (SIGTERM, then the grace)
both drain and exit 0, and `podman kube down` removes them.

Every page is served inside its own pod, on the pod's loopback (allowed by SB_ALLOW_HOSTS);
Gemini is an API key against a closed port: nothing reaches the internet.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped,unused-ignore]

from browser_core.testing import free_port
from search import client

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the scripts folder (no package)
import kube_pods

IMAGE = os.environ.get("IMAGE") or "stream-browser"
ENGINE = os.environ.get("ENGINE") or "podman"
REPLICAS = 2
START_S = 180.0  # two Chromes on Xvfb and two services, on 2 busy cores
PAGE_PORT = 18080  # each pod's own page server, on the pod's loopback
SENTENCE = "This page was served inside {name} and read by its own broadcast Chrome."

# Inside a pod: a page naming the pod, served on its loopback (standard library only).
PAGE_SERVER = """
import http.server, os, sys
os.makedirs('/tmp/page', exist_ok=True)
para = '<p>Plain paragraphs make a page worth reading for the extractor.</p>' * 8
with open('/tmp/page/index.html', 'w') as f:
    f.write('<!doctype html><html lang=en><head><title>Pod page</title></head><body>'
            '<article><h1>Pod page</h1><p>' + sys.argv[1] + '</p>' + para + '</article>'
            '</body></html>')
os.chdir('/tmp/page')
http.server.ThreadingHTTPServer(('127.0.0.1', int(sys.argv[2])),
                                http.server.SimpleHTTPRequestHandler).serve_forever()
"""

# Inside a pod: the X11 connection set-up a screen-share client makes on the display's
# socket file; prints "ok WIDTH HEIGHT" for the first screen.
X11_HELLO = """
import socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(struct.pack('<cxHHHHxx', b'l', 11, 0, 0, 0))
head = b''
while len(head) < 8:
    head += s.recv(8 - len(head))
status, _, major, minor, words = struct.unpack('<BBHHH', head)
data = b''
while len(data) < words * 4:
    data += s.recv(words * 4 - len(data))
if status != 1:
    print('refused', data[:80]); sys.exit(1)
vendor_len = struct.unpack_from('<H', data, 16)[0]
formats = data[21]
screen = 32 + ((vendor_len + 3) & ~3) + 8 * formats
print('ok', *struct.unpack_from('<HH', data, screen + 20))
"""

# Inside a pod: the broadcast Chrome's browser process, its DISPLAY and whether it is sandboxed.
CHROME_INFO = """
import json, pathlib
found = []
for p in pathlib.Path('/proc').glob('[0-9]*'):
    try:
        argv = (p / 'cmdline').read_bytes().split(b'\\0')
        raw = (p / 'environ').read_bytes().split(b'\\0')
        env = dict(e.split(b'=', 1) for e in raw if b'=' in e)
    except OSError:
        continue
    cmd = [a.decode(errors='replace') for a in argv if a]
    if cmd and cmd[0].endswith('/chromium') and not any(a.startswith('--type=') for a in cmd):
        found.append({'pid': int(p.name), 'display': env.get(b'DISPLAY', b'').decode(),
                      'no_sandbox': '--no-sandbox' in cmd})
    if cmd and cmd[0].endswith('Xvfb'):
        found.append({'xvfb': int(p.name), 'args': cmd[1:]})
print(json.dumps(found))
"""


def engine(
    *args: str, timeout: float = 120, check: bool = True
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [ENGINE, *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"{ENGINE} {' '.join(args)}: exit {done.returncode}\n{done.stderr}")
    return done


@dataclass
class Broadcast:
    """One replica: its pod, its container, its loopback port and token."""

    name: str
    port: int
    token: str

    @property
    def container(self) -> str:
        return f"{self.name}-stream-browser"  # podman names a pod's container POD-CONTAINER

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get(self, path: str) -> tuple[int, Any]:
        request = urllib.request.Request(
            self.url + path, headers={"Authorization": f"Bearer {self.token}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=15) as response:
                body = response.read().decode()
                return response.status, json.loads(body) if path != "/metrics" else body
        except urllib.error.HTTPError as exc:
            with exc:
                return exc.code, exc.read().decode()

    def logs(self) -> str:
        done = engine("logs", self.container, check=False)
        return done.stdout + done.stderr

    def exec(self, *cmd: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return engine("exec", self.container, *cmd, check=check, timeout=60)

    def python(self, script: str, *args: str) -> str:
        return self.exec("python3", "-c", script, *args).stdout

    def read(self, timeout: float = 60) -> dict[str, Any] | None:
        return client.browse_and_search(
            "",
            action="read",
            url=f"http://127.0.0.1:{PAGE_PORT}/",
            broadcasting=True,
            timeout=timeout,
            service_url=self.url,
            token=self.token,
        )

    def chrome(self) -> list[dict[str, Any]]:
        return [p for p in json.loads(self.python(CHROME_INFO)) if "pid" in p]

    def xvfb(self) -> list[dict[str, Any]]:
        return [p for p in json.loads(self.python(CHROME_INFO)) if "xvfb" in p]

    def live(self) -> subprocess.CompletedProcess[str]:
        """The pod's liveness probe, as the kubelet runs it."""
        (container,) = _pod_template()["containers"]
        return self.exec(*container["livenessProbe"]["exec"]["command"], check=False)


def _pod_template() -> dict[str, Any]:
    spec: dict[str, Any] = kube_pods.statefulset(kube_pods.manifests())["spec"]
    return dict(spec["template"]["spec"])


def _free_run(count: int) -> int:
    """A first port whose next `count - 1` are free too."""
    for _ in range(50):
        base = free_port()
        if base + count < 65536 and all(_is_free(base + i) for i in range(1, count)):
            return base
    raise AssertionError("no run of free ports")


def _is_free(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@dataclass
class Fleet:
    file: Path
    boxes: list[Broadcast]
    down: subprocess.CompletedProcess[str] | None = None
    down_s: float = 0.0


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    if engine("image", "inspect", IMAGE, check=False).returncode != 0:
        pytest.skip(f"no {IMAGE} image: run make image (make kube-test builds it)")
    base = _free_run(REPLICAS)
    boxes = [
        Broadcast(f"stream-browser-{i}", base + i, secrets.token_hex(32)) for i in range(REPLICAS)
    ]
    file = tmp_path_factory.mktemp("kube") / "pods.yaml"
    tokens = file.parent / "tokens"  # what the Secret's volume holds: a file per pod
    tokens.mkdir()
    for box in boxes:
        (tokens / box.name).write_text(box.token)
    docs = kube_pods.render(
        replicas=REPLICAS,
        host_port=base,
        image=IMAGE,
        tokens_dir=tokens,
        env={
            "SB_ALLOW_HOSTS": f"127.0.0.1:{PAGE_PORT}",
            "GEMINI_AUTH": "apikey",
            "GEMINI_API_KEY": "not-a-real-key-for-tests",
            "GEMINI_API_BASE": "http://127.0.0.1:9",
        },
    )
    file.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    engine("kube", "down", str(file), check=False)
    played = engine("kube", "play", str(file), timeout=300, check=False)
    run = Fleet(file, boxes)
    try:
        assert played.returncode == 0, played.stdout + played.stderr
        _wait_serving(boxes)
        for box in boxes:
            sentence = SENTENCE.format(name=box.name)
            engine("exec", "-d", box.container, "python3", "-c", PAGE_SERVER, sentence,
                   str(PAGE_PORT))  # fmt: skip
        yield run
    finally:
        if run.down is None:
            engine("kube", "down", str(file), check=False, timeout=180)
        for box in boxes:
            engine("volume", "rm", "-f", f"state-{box.name}", check=False)


def _wait_serving(boxes: list[Broadcast]) -> None:
    deadline = time.monotonic() + START_S
    waiting = list(boxes)
    while waiting and time.monotonic() < deadline:
        waiting = [box for box in waiting if "serving on" not in box.logs()]
        time.sleep(0.5)
    for box in waiting:
        logs = engine("logs", box.container, check=False)
        raise AssertionError(f"{box.name} did not serve in {START_S:.0f} s:\n{logs.stderr}")


# -- each broadcast is its own, and says which it is --------------------------------------------


def test_each_replica_names_itself_in_status_metrics_and_every_log_line(fleet: Fleet) -> None:
    for box in fleet.boxes:
        status, data = box.get("/v1/status")
        assert status == 200 and data["instance"] == box.name, data
        status, text = box.get("/metrics")
        samples = [line for line in text.splitlines() if line and not line.startswith("#")]
        assert status == 200 and samples
        assert all(f'sb_instance="{box.name}"' in line for line in samples)
        lines = [json.loads(x) for x in box.logs().splitlines() if x.startswith("{")]
        assert lines and {line.get("instance") for line in lines} == {box.name}


def test_each_replica_answers_a_read_through_the_stdlib_client_on_its_own_port(
    fleet: Fleet,
) -> None:
    ports = {box.port for box in fleet.boxes}
    assert len(ports) == REPLICAS
    for box in fleet.boxes:
        result = box.read()
        assert result is not None and result["provider"] == "read", (box.name, result)
        assert SENTENCE.format(name=box.name) in result["reply_text"]
        assert "UNTRUSTED" in result["reply_text"]


def test_each_replica_has_its_own_chrome_in_its_sandbox_and_its_own_display(fleet: Fleet) -> None:
    for box in fleet.boxes:
        (chrome,) = box.chrome()
        (xvfb,) = box.xvfb()
        assert xvfb["args"][:3] == ["-displayfd", "3", "-screen"], xvfb
        assert chrome["display"] == ":0" and not chrome["no_sandbox"], chrome
        # what a screen-share sidecar mounting the pod's x11 volume connects to
        hello = box.python(X11_HELLO, "/tmp/.X11-unix/X0").split()
        assert hello == ["ok", "1280", "800"], hello
    # two pods, two Chromes: the other one's processes are not visible from either
    names = {box.exec("hostname").stdout.strip() for box in fleet.boxes}
    assert names == {box.name for box in fleet.boxes}


def test_a_wedged_then_killed_chrome_fails_its_liveness_while_the_other_broadcast_answers(
    fleet: Fleet,
) -> None:
    sick, well = fleet.boxes
    assert sick.live().returncode == 0 and well.live().returncode == 0
    (chrome,) = sick.chrome()
    sick.exec("kill", "-STOP", str(chrome["pid"]))  # wedged: /healthz still answers
    assert sick.get("/v1/status")[0] == 200
    wedged = sick.live()
    assert wedged.returncode == 1 and "broadcast Chrome does not answer" in wedged.stderr
    result = well.read()
    assert result is not None and SENTENCE.format(name=well.name) in result["reply_text"]
    sick.exec("kill", "-KILL", str(chrome["pid"]))  # gone
    assert wait_for(lambda: not sick.chrome())
    assert sick.live().returncode == 1
    assert well.live().returncode == 0
    result = well.read()
    assert result is not None and SENTENCE.format(name=well.name) in result["reply_text"]


def wait_for(predicate: Any, timeout: float = 20.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.3)
    return False


def test_stopped_as_the_kubelet_stops_them_both_drain_exit_0_and_kube_down_removes_them(
    fleet: Fleet,
) -> None:
    """SIGTERM with the pod's terminationGracePeriodSeconds (`podman pod stop -t`: podman 4.3's
    `kube down` alone gives no grace, its containers exit 137 within seconds), then
    `podman kube down` removes both pods."""
    grace = _pod_template()["terminationGracePeriodSeconds"]
    waits = [
        subprocess.Popen([ENGINE, "wait", box.container], stdout=subprocess.PIPE, text=True)
        for box in fleet.boxes
    ]
    time.sleep(1.0)  # `wait` is attached
    begun = time.monotonic()
    for box in fleet.boxes:
        engine("pod", "stop", "-t", str(grace), box.name, timeout=grace + 30)
    stopped_s = time.monotonic() - begun
    codes = [int((w.communicate(timeout=30)[0] or "-1").split()[-1]) for w in waits]
    assert codes == [0] * REPLICAS, codes  # drained and exited, never killed
    assert stopped_s < grace
    for box in fleet.boxes:
        logs = box.logs()
        assert '"service.draining"' in logs and '"service.stopped"' in logs, logs[-500:]
    begun = time.monotonic()
    fleet.down = engine("kube", "down", str(fleet.file), timeout=180, check=False)
    fleet.down_s = time.monotonic() - begun
    assert fleet.down.returncode == 0, fleet.down.stderr
    for box in fleet.boxes:
        assert engine("container", "exists", box.container, check=False).returncode == 1
        assert engine("pod", "exists", box.name, check=False).returncode == 1
    print(
        f"\nboth drained and exited 0 in {stopped_s:.1f} s (grace {grace} s); "
        f"kube down removed both in {fleet.down_s:.1f} s"
    )
