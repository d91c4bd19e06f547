"""Every number a reader may type or paste is a query the worker answers (issue 37).

lunr's TokenSet names its nodes by their labels and ids run together, so with digits among the
index's words two nodes could merge and the set held words the index did not: with the source title
"sageattention 1.0.6 wheel" in the index, the queries ``5`` and ``50`` (and every pasted message
holding them, as "... scheduled for Step 5") threw in the worker and showed "No matching documents".
search-worker.js names the nodes unambiguously. Each digit and each two-digit number that the
index holds as a word must find something, and the worker must throw nothing.
"""

from __future__ import annotations

import json
import re

from .searchbox import open_search, wait_shown


def numbers_in_index(site) -> list[str]:
    data = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    separator = re.compile(data["config"]["separator"])
    words = {w for doc in data["docs"] for f in ("title", "text", "words") for w in separator.split(doc.get(f) or "")}
    return sorted(w for w in words if re.fullmatch(r"\d{1,2}", w))


def test_each_number_the_index_holds_finds_something_and_the_worker_throws_nothing(new_context, origin, site):
    numbers = numbers_in_index(site)
    assert len(numbers) >= 20, f"the index holds only these numbers as words: {numbers}"
    page = open_search(new_context, origin)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" or "Invalid query" in m.text else None)
    box = page.locator("input.md-search__input")
    empty = []
    for n in numbers:
        box.fill(n)
        box.press("End")
        wait_shown(page)
        if "No matching" in page.locator(".md-search-result__meta").inner_text():
            empty.append(n)
    assert not empty and not errors, f"no results for {empty}; worker errors: {errors[:3]}"
