// The wheel: the console's person takes the broadcast tab, acts on it, and gives it back.
// Frames come on one streaming fetch (it carries X-Console-Key, which EventSource cannot);
// clicks, wheel turns, keys and text go to /console/api/screen/input as fractions of the
// picture, scaled to the page by the service. Alerts (a search engine refused us) show here,
// with a button to take the screen and one to dismiss. Uses console.js's helpers.
"use strict";

const FORWARDED_KEYS = new Set(["Enter", "Backspace", "Tab", "Escape", "ArrowLeft", "ArrowUp",
  "ArrowRight", "ArrowDown", "Delete", "Home", "End", "PageUp", "PageDown"]);
let holding = false;
let streaming = null; // the AbortController of the frames' fetch
let streamUrl = null;
let pendingText = "";
let textTimer = null;

async function post(path, body) {
  const answer = await fetch(path, {
    method: "POST", credentials: "same-origin", cache: "no-store",
    headers: { "X-Console-Key": key(), "Content-Type": "application/json" },
    body: JSON.stringify(body || {}),
  });
  if (answer.status === 401) { signInAgain(); throw new Error("signed out"); }
  if (!answer.ok) {
    let message = "refused (" + answer.status + ")";
    try { const e = (await answer.json()).error; message = e.message + (e.fix ? ": " + e.fix : ""); } catch (e) { /* keep */ }
    setText($("wheel-message"), message);
    throw new Error(message);
  }
  setText($("wheel-message"), "");
  return answer;
}

function renderAlerts(alerts) {
  const box = $("alerts");
  clear(box);
  box.hidden = !alerts.length;
  for (const a of alerts) {
    const p = el("p");
    if (a.kind === "parse_suspect") { renderParseAlert(box, p, a); continue; }
    p.appendChild(el("strong", a.provider + " refused the broadcast Chrome (" + a.kind + ")"));
    const resting = a.rest && a.rest.resting;
    const then = resting
      ? ": " + a.provider + " rests until " + shortTime(a.rest.until) + " (searches go to the next engine on screen, else to Gemini); solve it in the broadcast tab and give the screen back to end the rest."
      : ": searches go to Gemini, off screen, until someone solves it in the broadcast tab.";
    p.appendChild(el("span", "since " + shortTime(a.since) + ", " + a.count + " time" + (a.count === 1 ? "" : "s") + then));
    const take = el("button", "Take the screen", "take");
    take.type = "button";
    take.addEventListener("click", takeScreen);
    const dismiss = el("button", "Dismiss");
    dismiss.type = "button";
    dismiss.className = "dismiss";
    dismiss.addEventListener("click", () => post("/console/api/alerts/dismiss", { provider: a.provider, kind: a.kind }).catch(() => {}));
    p.appendChild(take);
    p.appendChild(dismiss);
    if (a.detail) p.appendChild(el("span", a.detail, "small"));
    box.appendChild(p);
  }
}

// A results page that no longer parses as it should: the brain gets a generic reading, and
// the page is kept as a case for the fix.
function renderParseAlert(box, p, a) {
  p.appendChild(el("strong", a.message || (a.provider + "'s results page may have changed")));
  const kept = a.case ? "; the page is kept as case " + a.case + " (make case CASE=" + a.case + " NAME=...)" : "";
  p.appendChild(el("span", "since " + shortTime(a.since) + ", " + a.count + " time" + (a.count === 1 ? "" : "s") + ": searches answer with a generic reading of the page" + kept + "."));
  const dismiss = el("button", "Dismiss");
  dismiss.type = "button";
  dismiss.className = "dismiss";
  dismiss.addEventListener("click", () => post("/console/api/alerts/dismiss", { provider: a.provider, kind: a.kind }).catch(() => {}));
  p.appendChild(dismiss);
  if (a.detail) p.appendChild(el("span", a.detail, "small"));
  box.appendChild(p);
}

function renderHold(state) {
  const hold = state.hold;
  const mine = Boolean(hold && hold.mine);
  const held = $("held-by");
  held.hidden = !hold;
  if (hold) setText(held, mine ? "you hold the screen: calls go to Gemini" : "held by " + hold.holder + " in the console");
  $("take").disabled = Boolean(hold);
  document.querySelector(".wheel-take").hidden = mine;
  for (const button of document.querySelectorAll("#alerts .take")) button.hidden = Boolean(hold);
  $("controls").hidden = !mine;
  $("screen").classList.toggle("held", mine);
  const log = $("screen-log");
  clear(log);
  for (const e of state.screen_log || []) log.appendChild(el("li", shortTime(e.at) + " " + e.who + " " + e.what + (e.url ? " " + e.url : "")));
  if (!(state.screen_log || []).length) log.appendChild(el("li", "none", "muted"));
  if (mine && !holding) startStream();
  if (!mine && holding) stopStream();
}

async function takeScreen() {
  try {
    await post("/console/api/screen/take", { name: $("holder-name").value });
    startStream();
  } catch (e) { /* the message says why */ }
}

async function giveBack() {
  stopStream();
  try { await post("/console/api/screen/give-back"); } catch (e) { /* already back */ }
}

function startStream() {
  if (holding) return;
  holding = true;
  $("controls").hidden = false;
  $("screen").classList.add("held");
  $("screen").focus();
  readFrames();
}

function stopStream() {
  holding = false;
  if (streaming) streaming.abort();
  streaming = null;
  $("controls").hidden = true;
  $("screen").classList.remove("held");
}

// Each frame: two big-endian uint32 lengths, a JSON head ({w, h, url}), then the JPEG.
async function readFrames() {
  streaming = new AbortController();
  let buffer = new Uint8Array(0);
  try {
    const answer = await fetch("/console/api/screen/frames", {
      credentials: "same-origin", cache: "no-store", headers: { "X-Console-Key": key() }, signal: streaming.signal,
    });
    if (!answer.ok) { stopStream(); return; }
    const reader = answer.body.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const joined = new Uint8Array(buffer.length + value.length);
      joined.set(buffer);
      joined.set(value, buffer.length);
      buffer = joined;
      while (buffer.length >= 8) {
        const view = new DataView(buffer.buffer, buffer.byteOffset);
        const headLength = view.getUint32(0), jpegLength = view.getUint32(4);
        if (buffer.length < 8 + headLength + jpegLength) break;
        const head = JSON.parse(new TextDecoder().decode(buffer.subarray(8, 8 + headLength)));
        showFrame(head, buffer.slice(8 + headLength, 8 + headLength + jpegLength));
        buffer = buffer.slice(8 + headLength + jpegLength);
      }
    }
  } catch (e) { /* aborted, or the service went away */ }
  if (holding) { holding = false; streaming = null; }
}

function showFrame(head, jpeg) {
  const img = $("frame");
  if (streamUrl) URL.revokeObjectURL(streamUrl);
  streamUrl = URL.createObjectURL(new Blob([jpeg], { type: "image/jpeg" }));
  img.src = streamUrl;
  img.dataset.frames = String(Number(img.dataset.frames || 0) + 1);
  setText($("tab-url"), head.url || "");
  setText($("frame-state"), "in your hands");
  $("frame-state").className = "pill good";
  const address = $("address");
  if (document.activeElement !== address) address.value = head.url || "";
}

function where(event) {
  const box = $("frame").getBoundingClientRect();
  const x = (event.clientX - box.left) / box.width, y = (event.clientY - box.top) / box.height;
  return { x: Math.min(1, Math.max(0, x)), y: Math.min(1, Math.max(0, y)) };
}

// One event at a time, in order: a click lands before the text typed after it.
let sending = Promise.resolve();
function send(event) {
  sending = sending.then(() => post("/console/api/screen/input", event)).catch(() => {});
  return sending;
}

function flushText() {
  textTimer = null;
  if (pendingText) { const text = pendingText; pendingText = ""; send({ type: "text", text }); }
}

function onKey(event) {
  if (!holding || event.ctrlKey || event.metaKey || event.altKey) return;
  if (FORWARDED_KEYS.has(event.key)) {
    event.preventDefault();
    flushText();
    send({ type: "key", key: event.key });
  } else if (event.key.length === 1) {
    event.preventDefault();
    pendingText += event.key;
    if (!textTimer) textTimer = setTimeout(flushText, 40);
  }
}

function wheelControls() {
  $("take").addEventListener("click", takeScreen);
  $("give-back").addEventListener("click", giveBack);
  $("back").addEventListener("click", () => post("/console/api/screen/back").catch(() => {}));
  $("forward").addEventListener("click", () => post("/console/api/screen/forward").catch(() => {}));
  $("controls").addEventListener("submit", (event) => {
    event.preventDefault();
    post("/console/api/screen/navigate", { url: $("address").value }).then(() => $("screen").focus()).catch(() => {});
  });
  const screen = $("screen");
  $("frame").addEventListener("click", (event) => { if (holding) { screen.focus(); send({ type: "click", ...where(event) }); } });
  screen.addEventListener("wheel", (event) => {
    if (!holding) return;
    event.preventDefault();
    send({ type: "wheel", ...where(event), dx: event.deltaX, dy: event.deltaY });
  }, { passive: false });
  screen.addEventListener("keydown", onKey);
  screen.addEventListener("paste", (event) => {
    if (!holding) return;
    event.preventDefault();
    const text = (event.clipboardData.getData("text") || "").replace(/[\r\n\t]+/g, " ").slice(0, 256);
    if (text) send({ type: "text", text });
  });
}
