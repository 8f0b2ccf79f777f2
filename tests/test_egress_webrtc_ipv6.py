"""What could leave the broadcast Chrome around the egress guard: WebRTC's UDP (Chrome reads
its policy from the profile, not from the command line) and IPv6 spellings of internal
addresses (6to4, site-local).

Every stand-in target is on loopback. The address-rule checks call the guard's decision
function with a connector that fails the test if it is ever called: nothing is connected to.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import async_playwright

from browser_core import (
    BlockedUrl,
    LoopThread,
    build_settings,
    check_url,
    launch_chrome,
    stop_pid,
)
from browser_core.chrome import free_port
from browser_core.safety._egress import EgressGuard, Refused, egress_status
from tests._server import LocalServer, Reply

# -- WebRTC: UDP that never meets the SOCKS5 guard --------------------------------------------


class UdpRecorder:
    """A stand-in internal UDP service on loopback that records every datagram."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = int(self.sock.getsockname()[1])
        self.datagrams: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                data, _ = self.sock.recvfrom(65535)
            except OSError:
                return
            self.datagrams.append(data)

    def close(self) -> None:
        self.sock.close()


# A page asks WebRTC to reach two "internal" UDP services: a STUN/TURN server, and a remote
# peer whose only ICE candidate is on loopback (the connectivity checks are STUN requests).
_WEBRTC_JS = """async ([stun, peer, tcp]) => {
  const pc = new RTCPeerConnection({iceServers: [
    {urls: 'stun:127.0.0.1:' + stun},
    {urls: ['turn:127.0.0.1:' + stun + '?transport=udp',
            'turn:127.0.0.1:' + tcp + '?transport=tcp'], username: 'u', credential: 'p'}]});
  pc.createDataChannel('x');
  const offer = await pc.createOffer();
  await pc.setLocalDescription(offer);
  const other = new RTCPeerConnection();
  await other.setRemoteDescription(offer);
  const answer = await other.createAnswer();
  const sdp = answer.sdp.replace(/a=candidate.*\\r\\n/g, '');
  await pc.setRemoteDescription({type: 'answer', sdp});
  await pc.addIceCandidate({sdpMid: '0', sdpMLineIndex: 0,
    candidate: 'candidate:1 1 udp 2122260223 127.0.0.1 ' + peer + ' typ host'});
  await new Promise(done => setTimeout(done, 3000));
  const state = pc.iceGatheringState;
  pc.close(); other.close();
  return state;
}"""


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, LocalServer]]:
    """Chrome exactly as `stream-browser chrome` starts it (behind the guard process)."""
    public = LocalServer()
    chrome = launch_chrome(
        port=free_port(),
        user_data_dir=str(tmp_path_factory.mktemp("guarded") / "profile"),
        headless=True,
        allow_hosts=(f"127.0.0.1:{public.port}",),
        # No mDNS names for host candidates: on the unfixed code they would be announced by
        # multicast, and this test sends nothing beyond loopback. (Last --disable-features
        # wins, so it repeats the ones `chrome_args` sets.)
        extra_args=(
            "--disable-features=Translate,MediaRouter,OptimizationHints,WebRtcHideLocalIpsWithMdns",
        ),
    )
    yield chrome, public
    stop_pid(chrome.pid)
    if chrome.egress_pid:
        stop_pid(chrome.egress_pid)
    public.stop()


def test_webrtc_sends_no_udp_to_internal_addresses_around_the_guard(
    guarded: tuple[Any, LocalServer],
) -> None:
    """Needs a machine with a network interface besides loopback (WebRTC gathers no host
    candidates from loopback alone, and then sends nothing anyway)."""
    if all(name == "lo" for _, name in socket.if_nameindex()):
        pytest.skip("only a loopback interface: WebRTC would send nothing with or without the fix")
    chrome, public = guarded
    stun, peer = UdpRecorder(), UdpRecorder()
    tcp = socket.create_server(("127.0.0.1", 0))  # a TURN-over-TCP stand-in (via the proxy)
    tcp.settimeout(0.1)
    url = public.route("/rtc", Reply("<p>a public page</p>"))
    loop = LoopThread("audit-webrtc")

    async def scenario() -> str:
        pw = await async_playwright().start()
        try:
            browser = await pw.chromium.connect_over_cdp(chrome.endpoint)
            page = await browser.contexts[0].new_page()
            try:
                await page.goto(url, timeout=8000)
                port = int(tcp.getsockname()[1])
                return str(await page.evaluate(_WEBRTC_JS, [stun.port, peer.port, port]))
            finally:
                await page.close()
        finally:
            await pw.stop()

    try:
        state = loop.run(scenario(), 40)
        time.sleep(0.3)
        assert state in ("gathering", "complete")  # the script really ran
        accepted = []
        with pytest.raises(OSError):  # nothing ever connects over TCP either
            accepted.append(tcp.accept())
        assert stun.datagrams == [], "STUN/TURN over UDP went around the egress guard"
        assert peer.datagrams == [], "ICE checks to a loopback candidate went around the guard"
    finally:
        stun.close()
        peer.close()
        tcp.close()


def test_a_launched_profile_pins_webrtc_to_the_proxy(tmp_path: Path) -> None:
    """The policy is a profile preference (Chrome ignores the command-line switch), so it
    survives an existing profile whose own Preferences say otherwise."""
    prefs = tmp_path / "profile" / "Default" / "Preferences"
    prefs.parent.mkdir(parents=True)
    prefs.write_text(json.dumps({"webrtc": {"ip_handling_policy": "default"}, "x": 1}))
    chrome = launch_chrome(port=free_port(), user_data_dir=str(tmp_path / "profile"), headless=True)
    status = egress_status(build_settings(cdp_port=chrome.port, state_dir=str(tmp_path)))
    stop_pid(chrome.pid)
    if chrome.egress_pid:
        stop_pid(chrome.egress_pid)
    assert status.state == "guarded", status.detail
    data = json.loads(prefs.read_text(encoding="utf-8"))
    assert data["webrtc"]["ip_handling_policy"] == "disable_non_proxied_udp"


# -- address rules: IPv6 forms that embed or denote internal addresses ------------------------

EMBEDDED_INTERNAL = [
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
    "2002:c0a8:101::1",  # 6to4 of 192.168.1.1
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
    "fec0::1",  # site-local (deprecated, still internal where used)
    "fec0:0:0:ffff::1",  # the old site-local DNS resolver address
]


async def _never_connect(address: str, port: int) -> Any:
    raise AssertionError(f"the guard connected to {address}:{port}")


@pytest.mark.parametrize("address", EMBEDDED_INTERNAL)
def test_internal_ipv6_forms_are_refused_by_number_before_connecting(address: str) -> None:
    guard = EgressGuard(connector=_never_connect)
    with pytest.raises(Refused):
        asyncio.run(guard.decide(address, 80))


@pytest.mark.parametrize("address", EMBEDDED_INTERNAL)
def test_internal_ipv6_forms_are_refused_when_a_name_resolves_to_them(address: str) -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return ["93.184.216.34", address]  # one public answer, one internal

    guard = EgressGuard(resolver=resolver, connector=_never_connect)
    with pytest.raises(Refused, match="resolved from the name"):
        asyncio.run(guard.decide("public-looking.example", 80))


@pytest.mark.parametrize("address", EMBEDDED_INTERNAL)
def test_the_navigation_policy_refuses_them_too(address: str) -> None:
    with pytest.raises(BlockedUrl):
        check_url(f"http://[{address}]/", resolver=lambda host: [])


@pytest.mark.parametrize("address", ["2002:808:808::1", "2606:4700::1111", "2a00:1450::1"])
def test_public_ipv6_and_6to4_of_a_public_address_stay_open(address: str) -> None:
    async def to_loopback(host: str, port: int) -> Any:
        raise OSError("not connecting in a test")

    guard = EgressGuard(connector=to_loopback)
    assert asyncio.run(guard.decide(address, 80)) == [(address, 80)]


def test_the_doctor_reports_a_proxied_chrome_whose_webrtc_goes_around_it(tmp_path: Path) -> None:
    """A Chrome someone else started with the proxy flags but WebRTC free to use UDP."""
    chrome = launch_chrome(port=free_port(), user_data_dir=str(tmp_path / "p"), headless=True)
    try:
        prefs = tmp_path / "p" / "Default" / "Preferences"
        settings = build_settings(cdp_port=chrome.port, state_dir=str(tmp_path))
        data = json.loads(prefs.read_text(encoding="utf-8"))
        data["webrtc"]["ip_handling_policy"] = "default"
        prefs.write_text(json.dumps(data), encoding="utf-8")
        status = egress_status(settings)
        assert status.state == "missing" and "WebRTC" in status.detail, status.detail
    finally:
        stop_pid(chrome.pid)
        if chrome.egress_pid:
            stop_pid(chrome.egress_pid)
