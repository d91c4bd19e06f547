/* Runs before Material's bundle (overrides/main.html): points Material's search at the handbook's
 * worker, search-worker.js, which loads Material's own worker from the URL after its "#". */
(function () {
  "use strict";
  var config = document.getElementById("__config");
  var here = document.currentScript && document.currentScript.src;
  if (!config || !here) return;
  var settings = JSON.parse(config.textContent);
  if (!settings.search) return;
  var worker = new URL("search-worker.js", here);
  worker.hash = new URL(settings.search, location.href).href;
  settings.search = worker.href;
  config.textContent = JSON.stringify(settings);
})();
