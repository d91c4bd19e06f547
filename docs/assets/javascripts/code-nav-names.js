// Material puts the buttons of each code block (copy) in a <nav> of their own, with no name, so a
// page with several code blocks has several navigation landmarks that a screen reader can't tell
// apart (axe: landmark-unique). This names each one after its block's number on the page. It runs
// again when a block appears later (instant navigation swaps the page without a reload), and only
// then: a change that adds no code-block nav (typing in search, say) costs one check per node.
(function () {
  "use strict";
  var NAV = ".md-code__nav";
  function name() {
    var navs = document.querySelectorAll(NAV);
    for (var i = 0; i < navs.length; i++) {
      var label = "Code block " + (i + 1) + " actions";
      if (navs[i].getAttribute("aria-label") !== label) navs[i].setAttribute("aria-label", label);
    }
  }
  function addsNav(records) {
    for (var r = 0; r < records.length; r++) {
      var added = records[r].addedNodes;
      for (var n = 0; n < added.length; n++) {
        var node = added[n];
        if (node.nodeType === 1 && (node.matches(NAV) || node.querySelector(NAV))) return true;
      }
    }
    return false;
  }
  new MutationObserver(function (records) {
    if (addsNav(records)) name();
  }).observe(document.documentElement, { childList: true, subtree: true });
  name();
})();
