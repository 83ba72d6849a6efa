// Hosted checkout: a countdown to the transfer account's expiry and a poll of the payment's
// status. The page works without this script (it refreshes itself); this only makes it live.
(function () {
  "use strict";
  var box = document.getElementById("transfer");
  if (!box) return;
  var expires = Date.parse(box.getAttribute("data-expires"));
  var statusURL = box.getAttribute("data-status-url");
  var countdown = document.getElementById("countdown");
  var waiting = document.getElementById("waiting");

  function tick() {
    var left = Math.max(0, Math.round((expires - Date.now()) / 1000));
    var m = Math.floor(left / 60), s = left % 60;
    if (countdown) countdown.textContent = " (" + m + ":" + (s < 10 ? "0" : "") + s + " left)";
    if (left === 0) { location.reload(); return; }
    setTimeout(tick, 1000);
  }
  tick();

  // Copy the account number (the button shows only when the clipboard can be written).
  var copy = document.getElementById("copy-account");
  var copyStatus = document.getElementById("copy-status");
  if (copy && navigator.clipboard && window.isSecureContext) {
    copy.hidden = false;
    copy.addEventListener("click", function () {
      navigator.clipboard.writeText(copy.getAttribute("data-copy")).then(function () {
        if (copyStatus) copyStatus.textContent = "Copied";
      }, function () {
        if (copyStatus) copyStatus.textContent = "Copy failed: select the number instead";
      });
    });
  }

  function poll() {
    fetch(statusURL, { headers: { "Accept": "application/json" }, cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (env) {
        var st = env.data || {};
        if (st.status === "awaiting") { setTimeout(poll, 2000); return; }
        if (st.status === "completed") {
          if (waiting) waiting.textContent = st.success_message || "Payment received. Thank you!";
          if (st.redirect_url) { setTimeout(function () { location.href = st.redirect_url; }, 1500); return; }
        }
        location.reload();
      })
      .catch(function () { setTimeout(poll, 4000); });
  }
  setTimeout(poll, 1500);
})();
