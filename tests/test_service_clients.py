"""The service against clients nobody here wrote: Node's own `fetch` (what every Node MCP host
uses) gets through with the token, and a page in a real headless Chromium cannot call the
service, neither cross-origin nor through DNS rebinding (a name of the page's that resolves to
the service's address).

A real `stream-browser serve` on an ephemeral port; no Chrome behind it is needed (nothing
here reaches the tool).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from playwright.async_api import async_playwright

from tests._server import LocalServer, Reply
from tests._service_proc import ServiceProc, start_service, wait_until

NODE = shutil.which("node")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed (apt install nodejs)")

NODE_FETCH = """
const [url, token] = process.argv.slice(1);
const headers = token ? { Authorization: `Bearer ${token}` } : {};
const response = await fetch(url, { headers });
console.log(JSON.stringify({ status: response.status, body: await response.text() }));
"""


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProc]:
    service = start_service(None, tmp_path_factory.mktemp("clients-service"))
    yield service
    assert service.stop() == 0


def _node_fetch(url: str, token: str | None) -> dict[str, Any]:
    assert NODE is not None
    done = subprocess.run(
        [NODE, "--input-type=module", "-e", NODE_FETCH, url, token or ""],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return dict(json.loads(done.stdout))


def _refusals(service: ServiceProc) -> list[dict[str, Any]]:
    return service.events("service.refused")


@needs_node
def test_node_fetch_sends_sec_fetch_mode_and_nothing_a_browser_adds(http: LocalServer) -> None:
    """The premise of the browser check, on the Node this machine has."""
    seen: list[dict[str, str]] = []

    def record(handler: BaseHTTPRequestHandler) -> Reply:
        seen.append({k.lower(): v for k, v in handler.headers.items()})
        return Reply("{}", content_type="application/json")

    _node_fetch(http.route("/echo-headers", record), None)
    assert seen[0].get("sec-fetch-mode") == "cors"
    assert "origin" not in seen[0] and "sec-fetch-site" not in seen[0]


@needs_node
def test_node_fetch_with_the_token_is_answered(svc: ServiceProc) -> None:
    answer = _node_fetch(f"{svc.url}/v1/status", svc.token)
    assert answer["status"] == 200, answer
    assert json.loads(answer["body"])["queue"]["running"] is None


@needs_node
def test_node_fetch_without_the_token_gets_the_401_error_body(svc: ServiceProc) -> None:
    answer = _node_fetch(f"{svc.url}/v1/status", None)
    assert answer["status"] == 401
    assert json.loads(answer["body"])["error"]["kind"] == "unauthorized"


def _page_fetch_script(url: str, token: str) -> str:
    return f"""async () => {{
        try {{
            const response = await fetch({json.dumps(url)}, {{
                method: "POST",
                headers: {{ Authorization: "Bearer {token}", "Content-Type": "application/json" }},
                body: JSON.stringify({{ query: "x", action: "status" }}),
            }});
            return {{ status: response.status, body: await response.text() }};
        }} catch (error) {{
            return {{ failed: String(error) }};
        }}
    }}"""


async def _in_chromium(service: ServiceProc, page_url: str) -> tuple[Any, Any, Any]:
    """A page at `page_url` fetches the service (it even knows the token): cross-origin from
    a local page, then same-origin from a page whose name resolves to the service."""
    port = service.url.rsplit(":", 1)[1]
    rebind = f"http://rebind.test:{port}"
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--host-resolver-rules=MAP rebind.test 127.0.0.1"],
        )
        try:
            page = await browser.new_page()
            await page.goto(page_url)
            script = _page_fetch_script(f"{service.url}/v1/browse", service.token)
            cross = await page.evaluate(script)
            navigation = await page.goto(f"{rebind}/healthz")
            opened = navigation.status if navigation else None
            same = await page.evaluate(_page_fetch_script(f"{rebind}/v1/browse", service.token))
            return cross, opened, same
        finally:
            await browser.close()


def test_a_page_in_chromium_cannot_call_the_service_even_with_the_token(
    svc: ServiceProc, http: LocalServer
) -> None:
    before = len(_refusals(svc))
    page_url = http.route("/innocent", Reply("<html><body>a page</body></html>"))
    cross, opened, same = asyncio.run(_in_chromium(svc, page_url))
    # cross-origin: the preflight (OPTIONS, with Origin) is refused, so fetch itself fails
    assert "failed" in cross, cross
    # rebinding: the navigation names rebind.test in Host; the same-origin fetch is refused
    assert opened == 403
    assert same["status"] == 403, same
    assert json.loads(same["body"])["error"]["kind"] == "refused"
    assert wait_until(lambda: len(_refusals(svc)) - before >= 3)
    refused = _refusals(svc)[before:]
    assert {event["status"] for event in refused} == {403}
    assert not svc.events("service.turn"), "no call from a page reached the queue"
