"""The search box driven as a reader drives it, with an exact signal that a query's results are on
screen (no fixed quiet period), for test_search.py and test_error_search.py.

How Material 9 answers a query (its bundle's search query and result components, and its search
worker, which docs/assets/javascripts/search-worker.js wraps): a keyup in the box posts the box's
text to the search worker as a query message (type 2), unless it equals the last text posted; the
worker answers each query with exactly one result message (type 3), in order; Material's listener
on that message renders the meta line and the first ten results in the same task (the rest only
as the list is scrolled to its end). So the results of the text in the box are on screen once:
the last query posted is that text, every query posted has had its answer, and the results have
changed since the last answer.

WATCH records this in the page, test-side only (nothing is added to the site): it wraps
window.Worker before any page script runs (search-early.js then starts its worker through it),
counts the query messages posted and the result messages received, and numbers each answer and
each change to the results in one sequence. The watch's message listener is added as the worker is
made, so it runs before Material's, and the change Material makes to the results comes after it
in the sequence.
"""

from __future__ import annotations

from .support import HANG_MS

QUERY, RESULT = 2, 3  # Material's SearchMessageType
WATCH = """(() => {
  const kb = window.__kbSearch = {key: 0, seq: 0, sent: 0, got: 0, query: null, answer: 0, shownSeq: 0, shown: 0};
  document.addEventListener("keydown", () => { kb.key = performance.now(); }, true);
  const Native = window.Worker;
  window.Worker = function (url, options) {
    const worker = new Native(url, options);
    const post = worker.postMessage;
    worker.postMessage = function (message, ...rest) {
      if (message && message.type === %(query)d) { kb.sent += 1; kb.query = message.data; }
      return post.call(this, message, ...rest);
    };
    worker.addEventListener("message", event => {
      if (event.data && event.data.type === %(result)d) { kb.got += 1; kb.answer = ++kb.seq; }
    });
    return worker;
  };
  window.Worker.prototype = Native.prototype;
  document.addEventListener("DOMContentLoaded", () => {
    new MutationObserver(() => {
      if (kb.shownSeq > kb.answer) return;
      kb.shownSeq = ++kb.seq;
      kb.shown = performance.now();
    }).observe(document.querySelector(".md-search-result"), {childList: true, subtree: true, characterData: true});
  });
})();""" % {"query": QUERY, "result": RESULT}
# The results of the text in the box are on screen (see the module's docstring).
SHOWN = """() => { const kb = window.__kbSearch;
  return kb.sent > 0 && kb.got === kb.sent && kb.shownSeq > kb.answer
    && kb.query === document.querySelector("input.md-search__input").value; }"""
# Milliseconds from the last keydown to the change that put the last answer on screen.
ROUND_TRIP = "() => window.__kbSearch.shown - window.__kbSearch.key"


def open_search(new_context, origin: str):
    """A page of the served site with the search box open and WATCH installed."""
    context = new_context()
    context.add_init_script(WATCH)
    page = context.new_page()
    page.goto(f"{origin}/")
    page.locator("input.md-search__input").click()
    return page


def wait_shown(page) -> None:
    """Until the results of the text in the box are on screen; a timeout only guards a hang."""
    page.wait_for_function(SHOWN, timeout=HANG_MS)
