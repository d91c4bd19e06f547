/* Runs before Material's bundle (overrides/main.html): points Material's search at the handbook's
 * worker, search-worker.js. Its "#" carries Material's own worker (which it loads) and, on a served
 * site, the search index and Material's suggest setting, so it can start before the page asks. */
(function () {
  "use strict";
  var config = document.getElementById("__config");
  var here = document.currentScript && document.currentScript.src;
  if (!config || !here) return;
  var settings = JSON.parse(config.textContent);
  if (!settings.search) return;
  var worker = new URL("search-worker.js", here);
  var hash = new URLSearchParams({ worker: new URL(settings.search, location.href).href });
  // A served site: the worker fetches the search index itself as it starts (file:// can't fetch).
  if (location.protocol !== "file:") {
    hash.set("index", new URL("search/search_index.json", new URL(settings.base, location.href)).href);
    hash.set("suggest", (settings.features || []).indexOf("search.suggest") >= 0 ? "1" : "");
  }
  worker.hash = hash.toString();
  settings.search = worker.href;
  config.textContent = JSON.stringify(settings);
})();
