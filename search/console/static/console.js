// The console's one script. Every string that came from the web (titles, questions, URLs,
// envelopes, page text) is set with textContent, never as HTML, its bidirectional controls
// shown as visible marks. Every request carries the session's key (X-Console-Key), which the
// sign-in page made and only this origin's pages can read: the cookie alone opens nothing.
// Polls while the tab is visible: the state every second, a live frame a few times a second.
"use strict";

const STATE_EVERY_MS = 1000;
const FRAME_EVERY_MS = 600;
const KEY = "sb-console-key";
const PENDING_KEY = "sb-console-key-pending"; // signin.js's, adopted once the sign-in succeeded
const SIGN_IN = "/console/sign-in";
// Bidirectional controls (U+202A-202E, U+2066-2069, U+200E, U+200F, U+061C) in web text would
// reorder what the operator reads ("pay \u202Egnp.exe" shows as "pay exe.png").
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
let calls = [];
let openCall = null;
let frameUrl = null;
let shotUrl = null;

function $(id) { return document.getElementById(id); }

function visible(value) {
  return String(value).replace(BIDI, (c) =>
    "\u27e8U+" + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0") + "\u27e9");
}

function setText(node, value) { node.textContent = visible(value); }

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) setText(node, text);
  if (cls) node.className = cls;
  return node;
}

function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

function key() { return localStorage.getItem(KEY) || ""; }

function signInAgain() { window.location.replace(SIGN_IN); }

// Right after a sign-in (its redirect names #signed-in) the key signin.js made is the session's.
function adoptKey() {
  if (window.location.hash === "#signed-in") {
    const pending = localStorage.getItem(PENDING_KEY);
    if (pending) localStorage.setItem(KEY, pending);
    localStorage.removeItem(PENDING_KEY);
    history.replaceState(null, "", window.location.pathname);
  }
  return key() !== "";
}

async function get(path) {
  const answer = await fetch(path, {
    credentials: "same-origin", cache: "no-store", headers: { "X-Console-Key": key() },
  });
  if (answer.status === 401) { signInAgain(); throw new Error("signed out"); }
  return answer;
}

async function signOut(event) {
  event.preventDefault();
  // The key goes first: a poll answered 401 while the sign-out is in flight takes the page
  // to the sign-in page, and what came after the await would never run.
  const sent = key();
  localStorage.removeItem(KEY);
  try {
    await fetch("/console/sign-out", {
      method: "POST", credentials: "same-origin", headers: { "X-Console-Key": sent },
    });
  } catch (e) { /* signed out here all the same */ }
  window.location.replace("/console");
}

function shortTime(iso) { return String(iso || "").replace(/^.*T/, "").replace("Z", ""); }

function route(hops) {
  if (!hops || !hops.length) return "(no provider)";
  return hops.map((h) => h.provider + (h.ok ? " ok" : " " + (h.failure_kind || "failed")) +
    " " + h.elapsed_ms + " ms").join(" \u2192 ");
}

function renderHeader(state) {
  const instance = $("instance");
  instance.hidden = !state.instance;
  setText(instance, state.instance ? "instance " + state.instance : "");
  setText($("version"), "v" + state.service.version + ", up " + Math.round(state.service.uptime_s) + " s" +
    (state.service.draining ? ", draining" : ""));
  const chrome = $("chrome");
  setText(chrome, "Chrome: " + (state.chrome.state || (state.chrome.up ? "up" : "down")));
  chrome.className = "pill " + (state.chrome.up ? "good" : "bad");
  chrome.title = visible(state.chrome.last_error || "");
  const f = state.figures || {};
  setText($("figures"), Object.keys(f).sort().map((k) => k + " " + f[k]).join(", "));
  setText($("tab-url"), (state.screen && state.screen.owned_tab_url) || "(no broadcast tab yet)");
}

function renderQueue(state) {
  const q = state.queue;
  setText($("queue"), (q.running ? "running: " + q.running + " for " + q.running_s + " s" : "idle") +
    "; waiting " + q.waiting + " of " + q.max_waiting);
  const refusals = $("refusals");
  clear(refusals);
  for (const r of state.refusals) {
    refusals.appendChild(el("li", shortTime(r.at) + " " + r.status + " " + r.kind + " (" + r.face + " " + r.action + "): " + r.reason));
  }
  if (!state.refusals.length) refusals.appendChild(el("li", "none", "muted"));
  const egress = $("egress");
  clear(egress);
  for (const e of state.egress) {
    const li = el("li", shortTime(e.at) + " " + e.url + " \u2014 " + e.why);
    if (e.call) li.appendChild(el("span", " (call " + e.call + ": " + (e.query || "") + ")", "muted"));
    egress.appendChild(li);
  }
  if (!state.egress.length) egress.appendChild(el("li", "none", "muted"));
}

function renderKinds(kinds) {
  const select = $("kind");
  const have = new Set(Array.from(select.options).map((o) => o.value));
  for (const kind of kinds) {
    if (!have.has(kind)) { const o = el("option", kind); o.value = kind; select.appendChild(o); }
  }
}

function shown(call) {
  const kind = $("kind").value;
  if (!kind) return true;
  if (kind === "-ok") return call.ok === false || call.kinds.length > 0;
  return call.kinds.indexOf(kind) >= 0;
}

function renderCalls() {
  const body = $("calls").tBodies[0];
  clear(body);
  for (const call of calls.filter(shown)) {
    const row = el("tr", null, call.ok === false ? "failed" : (call.running ? "running" : ""));
    row.dataset.id = String(call.id);
    row.appendChild(el("td", shortTime(call.at)));
    row.appendChild(el("td", call.face));
    row.appendChild(el("td", call.action));
    row.appendChild(el("td", call.query || call.url || ""));
    row.appendChild(el("td", call.running ? "running\u2026" : route(call.route)));
    row.appendChild(el("td", call.elapsed_ms === null ? "" : call.elapsed_ms));
    row.addEventListener("click", () => openDetail(call.id));
    body.appendChild(row);
  }
}

function fact(dl, name, value) {
  dl.appendChild(el("dt", name));
  dl.appendChild(el("dd", value === null || value === undefined ? "" : value));
}

async function openDetail(id) {
  const answer = await get("/console/api/calls/" + id);
  if (!answer.ok) return;
  const call = await answer.json();
  openCall = call;
  $("detail-panel").hidden = false;
  setText($("detail-id"), String(call.id));
  const facts = $("detail-facts");
  clear(facts);
  fact(facts, "time", call.at);
  fact(facts, "face", call.face);
  fact(facts, "action", call.action);
  fact(facts, "question", call.query);
  if (call.url) fact(facts, "address", call.url);
  fact(facts, "answered by", call.provider || "nobody (the brain searches itself)");
  fact(facts, "took", call.elapsed_ms === null ? "running" : call.elapsed_ms + " ms");
  if (call.note) fact(facts, "note", call.note);
  const hops = $("detail-route").tBodies[0];
  clear(hops);
  for (const h of call.chain) {
    const row = el("tr", null, h.ok ? "" : "failed");
    for (const v of [h.provider, h.ok ? "yes" : "no", h.elapsed_ms, h.failure_kind || "", [h.detail, h.hint].filter(Boolean).join(" \u2014 ")]) {
      row.appendChild(el("td", v));
    }
    hops.appendChild(row);
  }
  setText($("envelope"), call.envelope === null ? "(no envelope: the call had no answer)" : call.envelope);
  const passages = $("passages");
  clear(passages);
  for (const p of call.passages) passages.appendChild(el("li", p));
  if (!call.passages.length) passages.appendChild(el("li", "none", "muted"));
  const sources = $("sources");
  clear(sources);
  for (const s of call.sources) sources.appendChild(el("li", s.title + " \u2014 " + s.url));
  showShot(call);
}

async function showShot(call) {
  const img = $("shot");
  setText($("shot-state"), call.shot ? "" : call.shot_state);
  if (!call.shot) { img.hidden = true; return; }
  const answer = await get("/console/api/calls/" + call.id + "/shot");
  if (!answer.ok) { img.hidden = true; return; }
  if (shotUrl) URL.revokeObjectURL(shotUrl);
  shotUrl = URL.createObjectURL(await answer.blob());
  img.src = shotUrl;
  img.hidden = false;
}

// The results pages kept because their parse was suspect: turn one into a test with
// `make case CASE=name NAME=recording` (docs/google.md).
function renderCases(cases) {
  const list = $("cases");
  clear(list);
  for (const c of cases) {
    const why = (c.reasons || []).join("; ");
    list.appendChild(el("li", shortTime(c.at) + " " + c.engine + " \u201c" + c.query + "\u201d: " + (why || "suspect") + " (" + c.name + ")"));
  }
  if (!cases.length) list.appendChild(el("li", "none", "muted"));
}

async function pollState() {
  try {
    const answer = await get("/console/api/state");
    if (answer.ok) {
      const state = await answer.json();
      renderHeader(state);
      renderQueue(state);
      renderKinds(state.kinds);
      renderAlerts(state.alerts || []);
      renderCases(state.cases || []);
      renderHold(state);
      calls = state.calls;
      renderCalls();
      if (openCall) {
        const now = calls.find((c) => c.id === openCall.id);
        if (now && ((openCall.elapsed_ms === null && !now.running) || (now.shot && !openCall.shot))) openDetail(openCall.id);
      }
    }
  } catch (e) { /* the service restarts: try again */ }
  setTimeout(pollState, STATE_EVERY_MS);
}

async function pollFrame() {
  if (document.visibilityState === "visible" && !holding) {
    try {
      const answer = await get("/console/api/frame");
      const state = answer.headers.get("x-frame-state") || "";
      const badge = $("frame-state");
      setText(badge, state === "paused" ? "paused: a call has the screen" : (answer.status === 204 ? (answer.headers.get("x-frame-why") || "no frame") : "live"));
      badge.className = "pill " + (state === "live" ? "good" : "");
      const img = $("frame");
      if (answer.status === 200) {
        const digest = answer.headers.get("x-frame-digest") || "";
        if (digest !== img.dataset.digest) {
          if (frameUrl) URL.revokeObjectURL(frameUrl);
          frameUrl = URL.createObjectURL(await answer.blob());
          img.src = frameUrl;
          img.dataset.digest = digest;
        }
      }
    } catch (e) { /* try again */ }
  }
  setTimeout(pollFrame, FRAME_EVERY_MS);
}

document.addEventListener("DOMContentLoaded", () => {
  if (!adoptKey()) { signInAgain(); return; }
  document.querySelector("header form").addEventListener("submit", signOut);
  $("kind").addEventListener("change", renderCalls);
  wheelControls();
  $("detail-close").addEventListener("click", () => { openCall = null; $("detail-panel").hidden = true; });
  pollState();
  pollFrame();
});
