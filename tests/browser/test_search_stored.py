"""The lunr index the search worker stores for the next page load (docs/assets/javascripts/
search-worker.js: terms' postings and sections' vectors kept as text and read on demand, sections
named by short keys) answers exactly as the index the worker has just built: the same sections, in
the same order, with the same scores and the same highlighted text, for queries of every kind the
worker rewrites. And it is a fraction of the size of lunr's own JSON of the same index."""

from __future__ import annotations

import json

from .support import HANG_MS, report
from .test_search_speed import wait_stored

QUERY, RESULT = 2, 3  # Material's SearchMessageType
# Every answer the worker posts, as Material's bundle receives it.
CAPTURE = """(() => {
  const kb = window.__kbAnswers = {sent: 0, answers: []};
  const Native = window.Worker;
  window.Worker = function (url, options) {
    const worker = new Native(url, options);
    const post = worker.postMessage;
    worker.postMessage = function (message, ...rest) {
      if (message && message.type === %(query)d) kb.sent += 1;
      return post.call(this, message, ...rest);
    };
    worker.addEventListener("message", event => {
      if (event.data && event.data.type === %(result)d) kb.answers.push(JSON.stringify(event.data.data));
    });
    return worker;
  };
  window.Worker.prototype = Native.prototype;
})();""" % {"query": QUERY, "result": RESULT}

QUERIES = [
    "checkpoint",
    "torchrun --nproc_per_node",
    "TORCH_TPU_",
    "recompilation",
    "ValueError: Cannot set TPU device to index 1",
    "bf16 precision HIGHEST",
    "5",
    "flash attention kernel",
]

# The stored record's form and size, and the size of lunr's own JSON of the same index (rebuilt
# here from the stored texts, with each section's address for its short key).
STORED_SIZES = """async () => {
  const record = await new Promise((resolve, reject) => {
    const request = indexedDB.open("kb-search");
    request.onerror = reject;
    request.onsuccess = () => {
      const get = request.result.transaction("index").objectStore("index").get("index");
      get.onsuccess = () => resolve(get.result);
      get.onerror = reject;
    };
  });
  const index = record.index;
  const refs = (await (await fetch("search/search_index.json")).json()).docs.map(doc => doc.location);
  // a section's short key: its place in the docs, in letters (search-worker.js: shortKey)
  const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const byKey = {};
  refs.forEach((ref, place) => {
    let key = "";
    do { key = letters[place % 52] + key; place = Math.floor(place / 52); } while (place > 0);
    byKey[key] = ref;
  });
  const unknown = new Set();
  const address = key => { if (!(key in byKey)) unknown.add(key); return byKey[key]; };
  const inverted = index.terms.map((term, i) => {
    const posting = JSON.parse(index.postings[i]);
    for (const field of index.fields) {
      const byKey = posting[field];
      posting[field] = {};
      for (const key in byKey) posting[field][address(key)] = byKey[key];
    }
    return [term, posting];
  });
  const vectors = index.vectorRefs.map((fieldRef, i) => {
    const cut = fieldRef.indexOf("/");
    return [fieldRef.slice(0, cut + 1) + address(fieldRef.slice(cut + 1)), JSON.parse(index.vectors[i])];
  });
  const lunrJson = JSON.stringify({version: "2.3.9", fields: index.fields, fieldVectors: vectors,
    invertedIndex: inverted, pipeline: index.pipeline});
  return {unknown: [...unknown], keys: Object.keys(index).sort(), stored: JSON.stringify(index).length, lunr: lunrJson.length};
}"""


def answers(page) -> list[str]:
    """The worker's answer to each query, typed into the open search box one after another."""
    box = page.locator("input.md-search__input")
    box.click()
    got = []
    for query in QUERIES:
        before = page.evaluate("() => window.__kbAnswers.sent")
        box.fill(query)
        box.dispatch_event("keyup")
        page.wait_for_function(
            "n => window.__kbAnswers.sent > n && window.__kbAnswers.answers.length === window.__kbAnswers.sent",
            arg=before,
            timeout=HANG_MS,
        )
        got.append(page.evaluate("() => window.__kbAnswers.answers.at(-1)"))
    return got


def test_the_stored_index_answers_as_the_built_one_and_is_small(new_context, origin):
    ctx = new_context()
    ctx.add_init_script(CAPTURE)
    page = ctx.new_page()
    page.goto(f"{origin}/")
    built = answers(page)
    wait_stored(page)
    page.goto(f"{origin}/reference/environment-variables/")
    stored = answers(page)
    for query, one, other in zip(QUERIES, built, stored, strict=True):
        assert json.loads(one)["items"], f"{query!r}: no results"
        assert one == other, f"{query!r}: the stored index answers otherwise than the built one"
    page.goto(f"{origin}/")
    sizes = page.evaluate(STORED_SIZES)
    report(
        "search",
        f"stored lunr index: {sizes['stored']:,} characters of text, lunr's own JSON of it {sizes['lunr']:,}",
    )
    assert sizes["unknown"] == [], "keys of no section"
    assert sizes["keys"] == ["fields", "pipeline", "postings", "terms", "vectorRefs", "vectors"]
    assert sizes["stored"] * 2 < sizes["lunr"], sizes
