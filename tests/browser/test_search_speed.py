"""Search is ready soon after a page becomes interactive, on every page, served or offline: the
index is small (kb/render/searchindex.py), the worker starts from the page head (search-early.js), and
the time from DOMContentLoaded to the first results of a query typed at once is measured at 1280
and 390 px. The handbook's search worker rewrites what readers paste
(docs/assets/javascripts/search-worker.js): its rewrite is checked here too."""

from __future__ import annotations

import json
import time

from .support import HANG_MS, median_ms, report, write_artifact

INDEX_LIMIT = 400_000  # bytes of search/search_index.json (issue 39)
TARGET_MS = 300  # the target, reported (timings on a shared machine are not asserted)
BROKEN_MS = HANG_MS  # asserted, a hang guard: no results this long after the page is interactive is a broken search
PAGES = ["", "migrate/troubleshooting/", "reference/api-mapping/", "reference/environment-variables/"]
VIEWPORTS = [(1280, 800), (390, 844)]
QUERY = "checkpoint"
HELD_BACK_S = 4  # Material's bundle held back this long, past the early worker's ready
# At DOMContentLoaded (after Material's bundle has run): open the search, type the query, and note
# when the first result appears.
TIMED = """
document.addEventListener("DOMContentLoaded", () => {
  const t = window.__kbReady = {dcl: performance.now(), first: null};
  const toggle = document.getElementById("__search");
  toggle.checked = true;
  toggle.dispatchEvent(new Event("change"));
  const input = document.querySelector("input.md-search__input");
  input.value = %s;
  input.focus();
  input.dispatchEvent(new KeyboardEvent("keyup"));
  const list = document.querySelector(".md-search-result__list");
  new MutationObserver(() => { if (t.first === null && list.children.length) t.first = performance.now(); })
    .observe(list, {childList: true});
});
""" % json.dumps(QUERY)


def test_the_search_index_is_small_and_leaves_out_the_print_page(site):
    index = site / "search" / "search_index.json"
    size = index.stat().st_size
    data = json.loads(index.read_text(encoding="utf-8"))
    pages = {doc["location"].split("#")[0] for doc in data["docs"]}
    report("search", f"search index: {size:,} bytes (limit {INDEX_LIMIT:,}), {len(data['docs'])} sections")
    assert "about/print/" not in pages
    assert "words" in data["config"]["fields"], "the index's config lacks the words field"
    assert size <= INDEX_LIMIT, f"search_index.json is {size:,} bytes, over {INDEX_LIMIT:,}"


FIRST_RESULTS = """() => [...document.querySelectorAll(".md-search-result__list a.md-search-result__link")]
  .slice(0, 5).map(a => new URL(a.href).pathname.split("/").slice(-2).join("/") + new URL(a.href).hash)"""


# Whether the worker has stored its lunr index for the next page load (search-worker.js: IndexedDB
# "kb-search", store "index"). Opened without a version, an existing database is never upgraded; one
# the worker has not made yet is not made here.
STORED = """async () => {
  if (!(await indexedDB.databases()).some(db => db.name === "kb-search")) return false;
  return await new Promise(resolve => {
    const request = indexedDB.open("kb-search");
    request.onerror = () => resolve(false);
    request.onsuccess = () => {
      const db = request.result;
      try {
        const count = db.transaction("index").objectStore("index").count();
        count.onsuccess = () => { db.close(); resolve(count.result > 0); };
        count.onerror = () => { db.close(); resolve(false); };
      } catch (err) { db.close(); resolve(false); }
    };
  });
}"""


def wait_stored(page) -> None:
    """Until the worker has stored its index (it does so 500 ms after building it); a hang guard only."""
    deadline = time.monotonic() + BROKEN_MS / 1000
    while not page.evaluate(STORED):
        assert time.monotonic() < deadline, "the search worker never stored its index"
        page.wait_for_timeout(50)


def time_to_results(browser, base: str, paths: list[str]) -> list[dict]:
    """Each page loaded in turn in one browser profile per width, as a reader moves through the
    site: the first load builds the search index and stores it (awaited here), later ones load the
    one the worker stored."""
    rows = []
    for width, height in VIEWPORTS:
        ctx = browser.new_context(viewport={"width": width, "height": height}, color_scheme="light")
        ctx.add_init_script(TIMED)
        page = ctx.new_page()
        for n, path in enumerate(paths):
            page.goto(base + path, wait_until="domcontentloaded")
            page.wait_for_function("() => window.__kbReady && window.__kbReady.first !== null", timeout=BROKEN_MS)
            took = page.evaluate("() => window.__kbReady.first - window.__kbReady.dcl")
            # Material renders the first ten results in one task, before the first change is noted
            top = page.evaluate(FIRST_RESULTS)
            rows.append({"width": width, "page": path or "/", "load": n, "ms": round(took), "top": top})
            if n == 0:
                wait_stored(page)
        ctx.close()
    return rows


def summarise(rows: list[dict], where: str) -> str:
    parts = []
    for width, _ in VIEWPORTS:
        first = [r["ms"] for r in rows if r["width"] == width and r["load"] == 0]
        later = [r["ms"] for r in rows if r["width"] == width and r["load"] > 0]
        parts.append(
            f"{width} px: first load {first[0]} ms, later loads median {median_ms(later):.0f} ms, max {max(later)} ms"
        )
    return (
        f"{where}: DOMContentLoaded -> first results for {QUERY!r}; " + "; ".join(parts) + f" (target {TARGET_MS} ms)"
    )


def assert_same_results(rows: list[dict]) -> None:
    """The index loaded from the cache answers as the one just built (the same first five results)."""
    tops = {tuple(r["top"]) for r in rows}
    assert len(tops) == 1 and all(tops), f"the results differ between page loads: {tops}"


def test_search_answers_soon_after_each_page_is_interactive_served(browser, origin):
    rows = time_to_results(browser, f"{origin}/", PAGES)
    summary = summarise(rows, "served")
    write_artifact("search-speed-served.json", {"summary": summary, "pages": rows})
    report("search", summary)
    assert_same_results(rows)


def test_search_answers_soon_after_each_page_is_interactive_offline(browser, offline_site):
    paths = ["index.html", "migrate/troubleshooting.html", "reference/api-mapping.html"]
    rows = time_to_results(browser, offline_site.as_uri() + "/", paths)
    summary = summarise(rows, "offline (file://)")
    write_artifact("search-speed-offline.json", {"summary": summary, "pages": rows})
    report("search", summary)
    assert_same_results(rows)


# Before any page script: count the workers the page creates, and note whether each came before the
# page had a body (from the head).
COUNT_WORKERS = """
window.__kbWorkers = [];
const Native = window.Worker;
window.Worker = function (url, options) {
  window.__kbWorkers.push({url: String(url).split("#")[0], head: document.body === null});
  return new Native(url, options);
};
window.Worker.prototype = Native.prototype;
"""


def test_the_search_worker_starts_from_the_page_head_and_is_the_one_search_uses(new_context, origin):
    """search-early.js starts the worker in the head and Material's bundle is handed that one: a
    single worker per page, and the search answers through it."""
    ctx = new_context()
    ctx.add_init_script(COUNT_WORKERS + TIMED)
    page = ctx.new_page()
    page.goto(f"{origin}/migrate/troubleshooting/", wait_until="domcontentloaded")
    page.wait_for_function("() => window.__kbReady && window.__kbReady.first !== null", timeout=BROKEN_MS)
    workers = page.evaluate("() => window.__kbWorkers")
    assert workers == [{"url": f"{origin}/assets/javascripts/search-worker.js", "head": True}], workers


def test_search_answers_when_the_early_worker_is_ready_before_materials_bundle(new_context, origin):
    """The worker search-early.js starts can build its index before Material's bundle listens to it
    (a slow bundle, a busy machine, an index from the cache): its first "ready" then reaches nobody.
    The bundle is held back here until the worker is surely done; the search must still answer."""
    ctx = new_context()
    ctx.add_init_script(TIMED)
    page = ctx.new_page()
    page.goto(f"{origin}/", wait_until="domcontentloaded")  # builds and stores the lunr index
    page.wait_for_function("() => window.__kbReady && window.__kbReady.first !== null", timeout=BROKEN_MS)
    wait_stored(page)

    def held_back(route):
        time.sleep(HELD_BACK_S)
        route.continue_()

    ctx.route("**/assets/javascripts/bundle.*.min.js", held_back)
    page.goto(f"{origin}/reference/environment-variables/", wait_until="domcontentloaded")
    # a hang guard only (the lost "ready" never answered at all)
    page.wait_for_function("() => window.__kbReady && window.__kbReady.first !== null", timeout=BROKEN_MS)


REWRITES = {
    # a leading '-' excludes a word in lunr; a word the index holds as one token is also searched as
    # typed, with a boost (^3), so "bool" ranks "bool dtype" above "boolean dtypes"
    "torchrun --nproc_per_node": "torchrun torchrun^3 nproc_per_node",
    "--fix": "fix fix^3",
    "a:b c^2 d~1 e* +f": "b c 2^1 d 1^1 e f",  # "a" is a stop word; one letter is no word to boost
    "torch-tpu": "torch-tpu",  # a hyphen inside a word stays
    "TORCH_TPU_": "TORCH^1 TPU^1",
    "recompilation recompiles recompile": "recompil recompilation^3 recompil recompiles^3 recompil recompile^3",
    # stop words ("cannot", "to") go, a value is exact, an English ending is cut; ValueError and TPU are
    # two tokens and one capital word of the index: searched only as prefixes
    "ValueError: Cannot set TPU device to index 1, current": (
        "ValueError set set^3 TPU devic device^3 index index^3 1^1 current current^3"
    ),
    "how to": "to",  # the last word may be half typed: kept
}


def test_the_search_worker_rewrites_what_readers_paste(new_context, origin, site):
    """The rewrite, run in the page with lunr loaded from Material's own worker (for its stop words)."""
    material = next((site / "assets" / "javascripts" / "workers").glob("search.*.min.js"))
    page = new_context().new_page()
    page.goto(f"{origin}/")
    got = page.evaluate(
        """async ([material, queries]) => {
          const text = async url => (await fetch(url)).text();
          new Function(await text(material))();  // defines self.lunr (its message handler stays idle)
          const module = {exports: {}};
          new Function("module", await text("/assets/javascripts/search-worker.js"))(module);
          return queries.map(q => module.exports(q));
        }""",
        [f"/{material.relative_to(site).as_posix()}", list(REWRITES)],
    )
    assert dict(zip(REWRITES, got, strict=True)) == REWRITES
