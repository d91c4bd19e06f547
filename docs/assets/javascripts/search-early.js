/* Starts the handbook's search worker (search-worker.js) from the page head on a served site
 * (overrides/main.html), so that it loads Material's worker, fetches the search index and builds or
 * loads its lunr index while the page itself is still loading. Material's bundle creates its search
 * worker later: it is handed this one (window.Worker is wrapped until then, for this worker's URL
 * only). Under file:// (the offline bundle, whose worker runs in an iframe shim) Material's own
 * start is kept, and so is it wherever this script can't start the worker. */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || location.protocol === "file:" || typeof Worker !== "function") return;
  var Native = window.Worker;
  var url = new URL("search-worker.js", script.src);
  url.hash = new URLSearchParams({
    worker: new URL(script.getAttribute("data-worker"), location.href).href,
    index: new URL(script.getAttribute("data-index"), location.href).href,
    suggest: script.getAttribute("data-suggest") || ""
  }).toString();
  var path = url.href.split("#")[0];
  var early;
  try {
    early = new Native(url.href);
  } catch (err) {
    return;
  }

  function release() {
    window.Worker = Native;
    var worker = early;
    early = null;
    return worker;
  }

  function HandbookWorker(target, options) {
    if (early && String(target).split("#")[0] === path) return release();
    return new Native(target, options);
  }
  HandbookWorker.prototype = Native.prototype;
  window.Worker = HandbookWorker;
  // A page without Material's search never asks for it: stop it once the page has loaded.
  window.addEventListener("load", function () {
    if (early) release().terminate();
  });
})();
