// The sign-in page's one script: as the form is sent it makes the session's key (32 random
// bytes), keeps it in this origin's storage (scheme, host and port: a page on another port
// cannot read it) and sends it with the token. The console's script adopts it once the
// sign-in succeeded and sends it with every request; the cookie alone opens nothing.
"use strict";

const PENDING_KEY = "sb-console-key-pending";

function newKey() {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelector("form").addEventListener("submit", () => {
    const key = newKey();
    localStorage.setItem(PENDING_KEY, key);
    document.getElementById("key").value = key;
  });
});
