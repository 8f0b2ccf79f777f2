"""The egress guard (SOCKS5 proxy) and the CDP Fetch guard, with a real Chromium.

Stand-in internal services are TCP listeners on loopback that record every connection they
accept: "it received nothing at all" is the assertion. The public page is a local server the
guard explicitly allows (host:port). Private, link-local and metadata addresses are never
connected to: the guard's connector is injected, refuses anything but loopback, and the
tests assert it was never called for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, async_playwright

from browser_core import LoopThread, build_settings, launch_chrome, stop_pid
from browser_core.chrome import egress_args, free_port, pid_alive
from browser_core.safety._egress import (
    REP_BAD_COMMAND,
    REP_NOT_ALLOWED,
    REP_OK,
    EgressGuard,
    Refused,
    egress_status,
    open_tcp,
    system_resolver,
)
from search import BrowseTool, ToolContext
from tests._server import LocalServer, Reply

ROOT = Path(__file__).resolve().parents[1]
LIVE = ToolContext(broadcasting=True)
PUBLIC_IP = "93.184.216.34"  # a public address the injected connector sends to loopback
INTERNAL_URLS = [
    "http://10.0.0.5/",
    "http://192.168.1.1/admin",
    "http://172.16.3.4/",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/",
    "http://[fd00::1]/",
    "http://[fe80::1]/",
    "http://[fd00:ec2::254]/",
    "http://0.0.0.0/",
    "http://224.0.0.1/",
    "http://corp.test/",  # the test resolver answers 10.1.2.3
    "http://meta.test/",  # ... and 169.254.169.254
]


def hosts_file_loopback_name() -> str | None:
    """A name in /etc/hosts (other than localhost) that resolves to loopback, if any."""
    try:
        lines = Path("/etc/hosts").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split("#", 1)[0].split()
        if len(fields) < 2 or not fields[0].startswith("127."):
            continue
        for name in fields[1:]:
            if "localhost" in name or "." in name:
                continue
            try:
                if ipaddress.ip_address(socket.gethostbyname(name)).is_loopback:
                    return name
            except OSError:
                continue
    return None


HOSTS_NAME = hosts_file_loopback_name()
needs_hosts_name = pytest.mark.skipif(
    HOSTS_NAME is None, reason="/etc/hosts has no name beyond localhost for loopback"
)


class Recorder:
    """A stand-in internal service: accepts TCP, records each connection, answers a secret."""

    def __init__(self) -> None:
        self.connections: list[bytes] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.sock.getsockname()[1])
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(1.0)
                try:
                    data = conn.recv(4096)
                except OSError:
                    data = b""
                self.connections.append(data)
                body = b"<h1>internal secret</h1>"
                head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                with_suppress_send(conn, head + body)

    def close(self) -> None:
        self.sock.close()


def with_suppress_send(conn: socket.socket, data: bytes) -> None:
    with contextlib.suppress(OSError):
        conn.sendall(data)


class Net:
    """The guard's seams: a resolver with per-test answers, a connector that only ever opens
    loopback sockets (a public test address is sent to the public stand-in)."""

    def __init__(self, public_port: int) -> None:
        self.public_port = public_port
        self.answers: dict[str, Callable[[], list[str]]] = {
            "corp.test": lambda: ["10.1.2.3"],
            "meta.test": lambda: ["169.254.169.254"],
            "sneaky.test": lambda: ["127.0.0.1"],
        }
        self.resolved: list[tuple[str, list[str]]] = []
        self.connected: list[tuple[str, int]] = []
        self.violations: list[tuple[str, int]] = []

    async def resolve(self, host: str, port: int) -> list[str]:
        answer = self.answers.get(host)
        addresses = answer() if answer else await system_resolver(host, port)
        self.resolved.append((host, addresses))
        return addresses

    async def connect(self, address: str, port: int) -> Any:
        self.connected.append((address, port))
        if address == PUBLIC_IP:
            return await open_tcp("127.0.0.1", self.public_port)
        if not ipaddress.ip_address(address.split("%")[0]).is_loopback:
            self.violations.append((address, port))
            raise OSError("test connector: only loopback")
        return await open_tcp(address, port)

    def clear(self) -> None:
        self.resolved.clear()
        self.connected.clear()


class Rig:
    """Chromium behind an in-process guard, plus the servers and a tab to drive."""

    def __init__(self, tmp: Path) -> None:
        self.public = LocalServer()
        self.internal = Recorder()
        self.net = Net(self.public.port)
        self.allow = (f"127.0.0.1:{self.public.port}",)
        self.guard = EgressGuard(
            allow_hosts=self.allow, resolver=self.net.resolve, connector=self.net.connect
        )
        self.guard_loop = LoopThread("egress-guard")
        self.guard_port = self.guard_loop.run(self.guard.start(), 10)
        self.chrome = launch_chrome(
            port=free_port(),
            user_data_dir=str(tmp / "profile"),
            headless=True,
            egress=False,
            extra_args=egress_args(self.guard_port),
        )
        self.loop = LoopThread("egress-test")
        self.page: Page = self.loop.run(self._open(), 30)

    async def _open(self) -> Page:
        self._pw = await async_playwright().start()
        browser = await self._pw.chromium.connect_over_cdp(self.chrome.endpoint)
        return await browser.contexts[0].new_page()

    def run(self, coro: Any, timeout: float = 20) -> Any:
        return self.loop.run(coro, timeout)

    def goto(self, url: str, settle_s: float = 0.0) -> str:
        """Open `url` in the bare tab (no routes, no Fetch guard: the proxy alone)."""

        async def go() -> str:
            try:
                await self.page.goto(url, timeout=8000)
            except Exception as exc:
                return str(exc).splitlines()[0]
            await asyncio.sleep(settle_s)
            return "ok"

        return str(self.run(go()))

    def evaluate(self, script: str, arg: Any = None) -> Any:
        return self.run(self.page.evaluate(script, arg))

    def close(self) -> None:
        self.run(self._pw.stop())
        stop_pid(self.chrome.pid)
        self.guard_loop.run(self.guard.close(), 5)
        self.public.stop()
        self.internal.close()


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    rig = Rig(tmp_path_factory.mktemp("egress"))
    yield rig
    rig.close()


@pytest.fixture
def clean(rig: Rig) -> Iterator[Rig]:
    rig.public.reset()
    rig.net.clear()
    rig.guard.refusals.clear()
    rig.internal.connections.clear()
    yield rig
    rig.goto("about:blank")
    assert rig.net.violations == [], "the guard tried to connect off loopback"


def nothing_reached(rig: Rig) -> None:
    time.sleep(0.3)  # let any stray connection arrive before saying none did
    assert rig.internal.connections == []


# -- the proxy alone: parser differentials ----------------------------------------------------


def test_the_allowed_public_page_loads_through_the_guard(clean: Rig) -> None:
    url = clean.public.route("/hello", Reply("<p>hello</p>"))
    assert clean.goto(url) == "ok"
    assert "/hello" in clean.public.requests
    assert set(clean.net.connected) == {("127.0.0.1", clean.public.port)}


@pytest.mark.parametrize(
    "form",
    [
        "http://127.0.0.1%2e:{port}/",
        "http://127.0.0.1:{port}\\@example.com/",
        "http://0x7f000001:{port}/",
        "http://127.1:{port}/",
        "http://2130706433:{port}/",
        "http://localhost.:{port}/",
        "http://[::ffff:127.0.0.1]:{port}/",
    ],
)
def test_numeric_and_encoded_loopback_forms_reach_nothing(clean: Rig, form: str) -> None:
    result = clean.goto(form.format(port=clean.internal.port))
    assert "ERR_SOCKS_CONNECTION_FAILED" in result
    nothing_reached(clean)
    assert any(port == clean.internal.port for _, port, _ in clean.guard.refusals)


@needs_hosts_name
@pytest.mark.parametrize(
    "form",
    ["http://{name}:{port}/", "http://%{hex}:{port}/", "http://{name}:{port}\\@example.com/"],
)
def test_a_hosts_file_name_in_any_spelling_reaches_nothing(clean: Rig, form: str) -> None:
    assert HOSTS_NAME is not None
    hexed = f"{ord(HOSTS_NAME[0]):02x}{HOSTS_NAME[1:]}"  # %76m for vm
    url = form.format(name=HOSTS_NAME, hex=hexed, port=clean.internal.port)
    assert "ERR_SOCKS_CONNECTION_FAILED" in clean.goto(url)
    nothing_reached(clean)
    assert (HOSTS_NAME, clean.internal.port, "loopback address (resolved from the name)") in (
        clean.guard.refusals
    )


# -- the proxy alone: redirects and page-driven navigation ------------------------------------


def _internal(rig: Rig, host: str = "127.0.0.1") -> str:
    return f"http://{host}:{rig.internal.port}/secret"


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "sneaky.test"])
def test_a_redirect_to_an_internal_host_reaches_nothing(clean: Rig, host: str) -> None:
    url = clean.public.route("/jump", Reply("", 302, {"Location": _internal(clean, host)}))
    assert "ERR_SOCKS_CONNECTION_FAILED" in clean.goto(url)
    assert "/jump" in clean.public.requests
    nothing_reached(clean)


@pytest.mark.parametrize(
    "body",
    [
        "<meta http-equiv=refresh content='0;url={target}'><p>moving</p>",
        "<p>moving</p><script>location = '{target}'</script>",
        "<p>moving</p><script>setTimeout(() => location.href = '{target}', 50)</script>",
    ],
)
def test_page_driven_navigation_to_an_internal_host_reaches_nothing(clean: Rig, body: str) -> None:
    url = clean.public.route("/move", Reply(body.format(target=_internal(clean))))
    clean.goto(url, settle_s=1.0)
    nothing_reached(clean)
    assert ("127.0.0.1", clean.internal.port) not in clean.net.connected
    assert any(port == clean.internal.port for _, port, _ in clean.guard.refusals)


# -- the proxy alone: requests no URL check ever sees -----------------------------------------

_WS_JS = """url => new Promise(done => {
  const ws = new WebSocket(url);
  ws.onopen = () => done('open'); ws.onerror = () => done('error');
  setTimeout(() => done('timeout'), 4000);
})"""
_FETCH_JS = """url => fetch(url, {mode: 'no-cors'}).then(() => 'fetched', () => 'failed')"""
_IMG_JS = """url => new Promise(done => {
  const img = new Image(); img.onload = () => done('loaded'); img.onerror = () => done('error');
  img.src = url;
})"""


def _names() -> list[str]:
    return ["127.0.0.1", "localhost", "sneaky.test", *([HOSTS_NAME] if HOSTS_NAME else [])]


@pytest.mark.parametrize("host", _names())
def test_websockets_by_number_and_by_name_reach_nothing(clean: Rig, host: str) -> None:
    clean.goto(clean.public.route("/ws", Reply("<p>ws</p>")))
    result = clean.evaluate(_WS_JS, f"ws://{host}:{clean.internal.port}/socket")
    assert result == "error"
    nothing_reached(clean)


@pytest.mark.parametrize("host", _names())
@pytest.mark.parametrize("script", [_FETCH_JS, _IMG_JS], ids=["fetch", "image"])
def test_images_and_fetch_to_internal_names_reach_nothing(
    clean: Rig, host: str, script: str
) -> None:
    clean.goto(clean.public.route("/sub", Reply("<p>sub</p>")))
    result = clean.evaluate(script, f"http://{host}:{clean.internal.port}/x.png")
    assert result in ("failed", "error")
    nothing_reached(clean)


_SW_PAGE = """<p>sw</p><script>
window.swResult = new Promise(async done => {
  navigator.serviceWorker.onmessage = e => done(e.data);
  const reg = await navigator.serviceWorker.register('/sw.js');
  const sw = reg.installing || reg.waiting || reg.active;
  const send = () => (reg.active || sw).postMessage('%s');
  if (reg.active) send(); else sw.addEventListener('statechange', () => {
    if (sw.state === 'activated') send(); });
  setTimeout(() => done('timeout'), 6000);
});
</script>"""
_SW_JS = """self.addEventListener('message', e => {
  fetch(e.data, {mode: 'no-cors'}).then(() => 'fetched', () => 'failed')
    .then(r => e.source.postMessage(r));
});
self.addEventListener('activate', e => e.waitUntil(self.clients.claim()));"""


def test_a_service_worker_fetch_reaches_nothing(clean: Rig) -> None:
    target = _internal(clean)
    clean.public.route("/sw.js", Reply(_SW_JS, content_type="text/javascript"))
    url = clean.public.route("/sw-page", Reply(_SW_PAGE % target))
    assert clean.goto(url) == "ok"
    assert clean.run(clean.page.evaluate("window.swResult"), 15) == "failed"
    assert "/sw.js" in clean.public.requests  # the worker really ran
    nothing_reached(clean)


def test_dns_rebinding_has_no_window(clean: Rig) -> None:
    """The name answers a public address first and loopback afterwards: each connection is
    resolved once and made to the address that was checked, so loopback is never reached."""
    rebound = threading.Event()  # the name's owner switches its answer once the page loaded
    clean.net.answers["rebind.test"] = lambda: ["127.0.0.1"] if rebound.is_set() else [PUBLIC_IP]
    clean.public.route("/", Reply("<p>public</p>", headers={"Connection": "close"}))
    clean.public.route("/again", Reply("second", headers={"Connection": "close"}))
    try:
        assert clean.goto(f"http://rebind.test:{clean.internal.port}/") == "ok"
        rebound.set()
        # Another port: a new connection (an idle socket Chrome opened before the switch was
        # checked against the public answer, and may be reused for the same origin).
        again = f"http://rebind.test:{clean.public.port}/again"
        script = "u => fetch(u, {mode: 'no-cors'}).then(() => 'fetched', () => 'failed')"
        assert clean.evaluate(script, again) == "failed"
    finally:
        del clean.net.answers["rebind.test"]
    nothing_reached(clean)
    lookups = [addrs for host, addrs in clean.net.resolved if host == "rebind.test"]
    assert lookups[0] == [PUBLIC_IP] and ["127.0.0.1"] in lookups[1:]
    assert clean.net.connected  # the page came from the checked public address, and only it
    assert {address for address, _ in clean.net.connected} == {PUBLIC_IP}


@pytest.mark.parametrize("url", INTERNAL_URLS)
def test_private_link_local_and_metadata_addresses_are_refused_before_connecting(
    clean: Rig, url: str
) -> None:
    assert "ERR_SOCKS_CONNECTION_FAILED" in clean.goto(url)
    assert clean.net.connected == []  # no socket was ever opened
    assert clean.guard.refusals


# -- the guard as a SOCKS server, without Chromium --------------------------------------------


async def _socks(port: int, host: str, target_port: int, command: int = 1) -> int:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"\x05\x01\x00")
    assert await reader.readexactly(2) == b"\x05\x00"
    name = host.encode()
    writer.write(bytes([5, command, 0, 3, len(name)]) + name + target_port.to_bytes(2, "big"))
    reply = await reader.readexactly(10)
    writer.close()
    return reply[1]


def test_the_socks_replies_say_why(rig: Rig) -> None:
    rig.net.clear()
    run = rig.guard_loop.run
    assert run(_socks(rig.guard_port, "10.9.8.7", 80), 5) == REP_NOT_ALLOWED
    assert run(_socks(rig.guard_port, "corp.test", 80), 5) == REP_NOT_ALLOWED
    assert run(_socks(rig.guard_port, "x.test", 80, command=2), 5) == REP_BAD_COMMAND
    assert run(_socks(rig.guard_port, "127.0.0.1", rig.public.port), 5) == REP_OK
    assert rig.net.connected == [("127.0.0.1", rig.public.port)]


def test_closing_the_guard_ends_its_open_connections() -> None:
    """A relay still open when the guard closes is ended, not left to outlive its loop."""

    async def scenario() -> tuple[bytes, bytes]:
        held: list[asyncio.StreamWriter] = []
        upstream = await asyncio.start_server(lambda r, w: held.append(w), "127.0.0.1", 0)
        up_port = int(upstream.sockets[0].getsockname()[1])
        guard = EgressGuard(allow_hosts=(f"127.0.0.1:{up_port}",))
        port = await guard.start()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"\x05\x01\x00")
        await reader.readexactly(2)
        writer.write(bytes([5, 1, 0, 1, 127, 0, 0, 1]) + up_port.to_bytes(2, "big"))
        reply = await reader.readexactly(10)
        await guard.close()
        rest = await asyncio.wait_for(reader.read(), 3.0)  # EOF: the guard ended the relay
        writer.close()
        await writer.wait_closed()
        for held_writer in held:
            held_writer.close()
        upstream.close()
        await upstream.wait_closed()
        return reply, rest

    reply, rest = asyncio.run(scenario())
    assert reply[1] == REP_OK
    assert rest == b""


def test_the_allow_list_opens_one_host_and_port_only() -> None:
    async def no_dns(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    guard = EgressGuard(allow_hosts=("vm:8000", "[::1]:9"), resolver=no_dns)
    assert asyncio.run(guard.decide("vm", 8000)) == [("127.0.0.1", 8000)]
    assert asyncio.run(guard.decide("::1", 9)) == [("::1", 9)]
    for host, port in (("vm", 8001), ("127.0.0.1", 8000), ("::1", 10)):
        with pytest.raises(Refused, match=r"address|host name"):
            asyncio.run(guard.decide(host, port))


def test_mapped_names_go_where_they_are_mapped_and_others_fail() -> None:
    guard = EgressGuard(host_map={"www.google.com": "127.0.0.1:4443", "*": ""})
    assert asyncio.run(guard.decide("WWW.Google.com.", 443)) == [("127.0.0.1", 4443)]
    with pytest.raises(Refused, match="not resolved"):
        asyncio.run(guard.decide("example.com", 443))


# -- the second layer: the CDP Fetch guard on a Chrome without the proxy ----------------------


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A Chrome started WITHOUT the egress guard (as someone else might start one)."""
    chrome = launch_chrome(
        port=free_port(),
        user_data_dir=str(tmp_path_factory.mktemp("bare-profile")),
        headless=True,
        egress=False,
    )
    yield chrome
    stop_pid(chrome.pid)


@pytest.fixture
def bare_rig(bare: Any, tmp_path: Path) -> Iterator[tuple[BrowseTool, LocalServer, Recorder]]:
    public, internal = LocalServer(), Recorder()
    settings = build_settings(
        cdp_port=bare.port,
        allow_hosts=(f"127.0.0.1:{public.port}",),
        state_dir=str(tmp_path / "state"),
        cache_ttl_s=0,
        settle_ms=600,
        gemini_cli=str(tmp_path / "no-gemini"),
    )
    tool = BrowseTool(settings)
    yield tool, public, internal
    tool.close()
    public.stop()
    internal.close()


@pytest.mark.parametrize(
    "reply",
    [
        Reply("", 302, {"Location": "{target}"}),
        Reply("<meta http-equiv=refresh content='0;url={target}'><p>moving</p>"),
        Reply("<p>moving</p><script>location = '{target}'</script>"),
    ],
    ids=["302", "meta-refresh", "location"],
)
def test_without_the_proxy_the_fetch_guard_stops_redirect_hops_before_they_are_sent(
    bare_rig: tuple[BrowseTool, LocalServer, Recorder], reply: Reply
) -> None:
    tool, public, internal = bare_rig
    target = f"http://127.0.0.1:{internal.port}/secret"
    body = reply.body.replace("{target}", target) if isinstance(reply.body, str) else reply.body
    headers = {k: v.replace("{target}", target) for k, v in reply.headers.items()}
    url = public.route("/start", Reply(body, reply.status, headers))
    walk = tool.run_sync(url, action="read", url=url, ctx=LIVE)
    time.sleep(0.3)
    # Not a byte of a request. (Without the proxy, Chrome may still open a bare TCP
    # preconnect at the start of a page-driven navigation, before any request exists;
    # behind the proxy even that is refused: see the tests above.)
    assert [data for data in internal.connections if data] == []
    assert walk.chain[0].failure_kind == "blocked-url", walk.chain
    assert walk.result is None or "internal secret" not in walk.result.reply_text


_SUBRESOURCES = {
    "image": "<img src='{target}/x.png'>",
    "script": "<script src='{target}/x.js'></script>",
    "style": "<link rel=stylesheet href='{target}/x.css'>",
    "frame": "<iframe src='{target}/frame'></iframe>",
    "fetch": "<script>fetch('{target}/api', {mode: 'no-cors'}).catch(() => 0)</script>",
}


@pytest.mark.parametrize("form", ["127.0.0.1", "localhost", "2130706433"])
@pytest.mark.parametrize("kind", sorted(_SUBRESOURCES))
def test_without_the_proxy_a_pages_own_requests_to_internal_hosts_reach_nothing(
    bare_rig: tuple[BrowseTool, LocalServer, Recorder], kind: str, form: str
) -> None:
    tool, public, internal = bare_rig
    target = f"http://{form}:{internal.port}"
    page = "<title>Public</title><p>" + "public words " * 60 + _SUBRESOURCES[kind]
    url = public.route("/page", Reply(page.replace("{target}", target)))
    walk = tool.run_sync(url, action="read", url=url, ctx=LIVE)
    assert walk.result is not None and walk.result.success, walk.chain
    time.sleep(0.5)  # what the page started after its DOM was read
    assert [data for data in internal.connections if data] == []


def test_sources_follow_the_page_when_it_moves_itself(
    bare_rig: tuple[BrowseTool, LocalServer, Recorder],
) -> None:
    tool, public, _ = bare_rig
    final = public.route("/final", Reply("<title>Final</title><p>" + "final words " * 60))
    url = public.route("/first", Reply(f"<meta http-equiv=refresh content='0;url={final}'>"))
    walk = tool.run_sync(url, action="read", url=url, ctx=LIVE)
    assert walk.result is not None and walk.result.success, walk.chain
    assert [s.url for s in walk.result.sources] == [final]
    assert "final words" in walk.result.reply_text


# -- telling whether Chrome runs behind the guard ---------------------------------------------


def test_status_and_doctor_say_plainly_when_the_guard_is_missing(bare: Any, tmp_path: Path) -> None:
    settings = build_settings(cdp_port=bare.port, state_dir=str(tmp_path))
    status = egress_status(settings)
    assert (status.state, status.chrome_pid) == ("missing", bare.pid)
    assert "egress guard missing" in status.detail and "stream-browser chrome" in status.hint
    proc = subprocess.run(
        [sys.executable, "-m", "search", "doctor"],
        env={"CDP_PORT": str(bare.port), "PATH": "/usr/bin:/bin", "SB_STATE_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert "FAIL egress guard: egress guard missing" in proc.stdout, proc.stdout + proc.stderr


def test_a_launched_chrome_is_guarded_and_a_dead_guard_is_reported(tmp_path: Path) -> None:
    chrome = launch_chrome(port=free_port(), user_data_dir=str(tmp_path / "p"), headless=True)
    try:
        settings = build_settings(cdp_port=chrome.port, state_dir=str(tmp_path))
        status = egress_status(settings)
        assert status.state == "guarded", status.detail
        assert (status.proxy_pid, status.proxy_port) == (chrome.egress_pid, chrome.egress_port)
        assert chrome.egress_pid is not None
        stop_pid(chrome.egress_pid)  # the guard gone: Chrome has no network, and we say so
        assert egress_status(settings).state == "down"
    finally:
        stop_pid(chrome.pid)


def test_the_guard_process_exits_when_chrome_exits(tmp_path: Path) -> None:
    chrome = launch_chrome(port=free_port(), user_data_dir=str(tmp_path / "p"), headless=True)
    assert chrome.egress_pid is not None and pid_alive(chrome.egress_pid)
    stop_pid(chrome.pid)
    for _ in range(40):
        if not pid_alive(chrome.egress_pid):
            break
        time.sleep(0.1)
    assert not pid_alive(chrome.egress_pid)
    log = (tmp_path / "p" / "egress-guard.log").read_text(encoding="utf-8")
    assert "egress.chrome_gone" in log


def test_a_chrome_on_another_machine_is_unknown_never_guarded(tmp_path: Path) -> None:
    settings = build_settings(cdp_url="http://10.0.0.7:9222", state_dir=str(tmp_path))
    status = egress_status(settings)
    assert (status.state, status.ok) == ("unknown", False)
    assert "not on this machine" in status.detail
