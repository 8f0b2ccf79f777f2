"""The driver's raw CDP socket (`browser_core/driver/_cdp_channel.py`) against the session's
real Chromium: reached from the HTTP endpoint or the browser's WebSocket address, a large
reply read whole, Chrome's error and a closed socket told apart from a result."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from typing import Any

import pytest

from browser_core import ChromeProcess
from browser_core.driver._cdp_channel import CdpChannel, CdpChannelError


def _ws_url(chrome: ChromeProcess) -> str:
    with urllib.request.urlopen(f"{chrome.endpoint}/json/version", timeout=5) as reply:
        return str(json.load(reply)["webSocketDebuggerUrl"])


@pytest.mark.parametrize("form", ["http", "ws"])
def test_the_socket_reaches_chrome_from_either_form_of_endpoint(
    chrome: ChromeProcess, form: str
) -> None:
    endpoint = chrome.endpoint if form == "http" else _ws_url(chrome)

    async def go() -> dict[str, Any]:
        channel = await CdpChannel.open(endpoint)
        try:
            return await channel.send("Browser.getVersion")
        finally:
            await channel.close()

    assert "Chrome" in asyncio.run(go())["product"]


def test_a_large_reply_arrives_whole_and_an_error_or_a_closed_socket_raises(
    chrome: ChromeProcess,
) -> None:
    words = "a sentence of the page, " * 60_000  # 1.4 MB back in one message

    async def go() -> tuple[str, str, str]:
        channel = await CdpChannel.open(chrome.endpoint)
        target = await channel.send("Target.createTarget", {"url": "about:blank"})
        try:
            session = await channel.attach(target["targetId"])
            reply = await session.send(
                "Runtime.evaluate", {"expression": f"'{words[:24]}'.repeat(60000)"}
            )
            with pytest.raises(CdpChannelError, match=r"Fetch\.getResponseBody") as error:
                await session.send("Fetch.getResponseBody", {"requestId": "none"})
        finally:
            await channel.send("Target.closeTarget", {"targetId": target["targetId"]})
            await channel.close()
        with pytest.raises(CdpChannelError, match="closed") as closed:
            await channel.send("Browser.getVersion")
        return str(reply["result"]["value"]), str(error.value), str(closed.value)

    value, error, closed = asyncio.run(go())
    assert value == words
    assert "Fetch.getResponseBody" in error and "closed" in closed


def test_no_chrome_at_the_endpoint_is_an_error_that_says_where(unused_port: int) -> None:
    endpoint = f"http://127.0.0.1:{unused_port}"
    with pytest.raises(CdpChannelError, match=rf"127\.0\.0\.1:{unused_port}"):
        asyncio.run(CdpChannel.open(endpoint, timeout=1.0))


@pytest.fixture
def unused_port() -> int:
    from browser_core.testing import free_port

    return int(free_port())
