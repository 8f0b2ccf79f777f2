// The architecture stream-browser replaces, kept as a benchmark baseline: one Node process per
// query that connects to the broadcast Chrome over CDP (npm playwright-core), opens a tab, does
// the search or the page read, prints JSON and exits (the tab is closed, Chrome stays up).
//
//   node browse-search.mjs --cdp http://127.0.0.1:9222 search "query" [--hl en --gl us]
//   node browse-search.mjs --cdp http://127.0.0.1:9222 read https://example.com/page

import { chromium } from "playwright-core";

function parseArgs(argv) {
  const opts = { cdp: "http://127.0.0.1:9222", hl: "en", gl: "us", timeout: 15000 };
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--cdp") opts.cdp = argv[++i];
    else if (arg === "--hl") opts.hl = argv[++i];
    else if (arg === "--gl") opts.gl = argv[++i];
    else if (arg === "--timeout") opts.timeout = Number(argv[++i]) * 1000;
    else rest.push(arg);
  }
  [opts.action, opts.target] = rest;
  if (!["search", "read"].includes(opts.action) || !opts.target) {
    throw new Error("usage: browse-search.mjs [--cdp URL] search QUERY | read URL");
  }
  return opts;
}

function searchUrl(query, hl, gl) {
  // The same URL as search.providers.google.search_url (q, hl, gl; spaces as "+").
  return "https://www.google.com/search?" + new URLSearchParams({ q: query, hl, gl }).toString();
}

async function extractResults(page) {
  return page.$$eval("a:has(h3)", (links) =>
    links.slice(0, 10).map((a) => ({
      title: a.querySelector("h3").innerText.trim(),
      url: a.href,
    })),
  );
}

async function main() {
  const started = performance.now();
  const opts = parseArgs(process.argv.slice(2));
  const browser = await chromium.connectOverCDP(opts.cdp, { timeout: opts.timeout });
  const connectedMs = performance.now() - started;
  const context = browser.contexts()[0];
  const page = await context.newPage();
  try {
    const url = opts.action === "search" ? searchUrl(opts.target, opts.hl, opts.gl) : opts.target;
    const response = await page.goto(url, { waitUntil: "domcontentloaded", timeout: opts.timeout });
    const out = { action: opts.action, url: page.url(), status: response ? response.status() : null };
    if (opts.action === "search") {
      out.results = await extractResults(page);
    } else {
      out.title = await page.title();
      out.text = (await page.innerText("body")).slice(0, 6000);
    }
    out.connect_ms = Math.round(connectedMs);
    out.elapsed_ms = Math.round(performance.now() - started);
    process.stdout.write(JSON.stringify(out) + "\n");
  } finally {
    await page.close().catch(() => {});
    await browser.close().catch(() => {}); // over CDP this only drops the connection
  }
}

main().catch((err) => {
  process.stderr.write(`browse-search: ${err && err.message ? err.message : err}\n`);
  process.exit(1);
});
