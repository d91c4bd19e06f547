// Material puts the buttons of each code block (copy) in a <nav> of their own, with no name, so a
// page with several code blocks has several navigation landmarks that a screen reader can't tell
// apart (axe: landmark-unique). This names each one after its block's number on the page. It runs
// again when a block appears later (instant navigation swaps the page without a reload).
(function () {
  "use strict";
  function name() {
    var navs = document.querySelectorAll(".md-code__nav");
    for (var i = 0; i < navs.length; i++) {
      var label = "Code block " + (i + 1) + " actions";
      if (navs[i].getAttribute("aria-label") !== label) navs[i].setAttribute("aria-label", label);
    }
  }
  new MutationObserver(name).observe(document.documentElement, { childList: true, subtree: true });
  name();
})();
