"""The search index, made light enough to load on every page: Material's search worker rebuilds
its lunr index from site/search/search_index.json on each page load, in time proportional to it.

Each section keeps, in ``text``, its opening words as written: the teaser the result list shows.
Its other words go to a field of their own, ``words`` (declared in mkdocs.yml's search
``fields``, so the worker indexes it; the result list never shows it): each once, in the order
they first appear, split with the index's own separator, so lunr finds exactly the words it found
before. Left out of ``words``: a word already in the teaser or the title; a word lunr drops
anyway (its English stop words, read from Material's own worker when the pipeline has
``stopWordFilter``); and a word that starts another word kept there, since every query word is a
prefix (``compile`` finds ``compiles``). What goes is repetition, which only nudged the ranking,
and markup, which only styled the text. Tags stay on a page's own entry, where they are shown.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Callable
from functools import partial
from itertools import pairwise
from pathlib import Path
from typing import Any

TEASER = 100  # characters of a section's text kept as written
WORDS = "words"  # the index field of a section's other words (mkdocs.yml: plugins.search.fields)
_TAG = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")
_WORKER = re.compile(r'"search":\s*"(assets/javascripts/workers/search\.[0-9a-f]+\.min\.js)"')
_STOP_LIST = re.compile(r'generateStopWordFilter\(\[((?:"[a-z]+",?)+)\]\)')


class SearchIndexError(ValueError):
    """search_index.json is not what Material writes."""


def _material_templates() -> Path | None:
    spec = importlib.util.find_spec("material")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "templates"


def stop_words() -> frozenset[str]:
    """lunr's English stop words as Material's search worker ships them (empty if not found)."""
    templates = _material_templates()
    if templates is None:
        return frozenset()
    workers = templates / "assets" / "javascripts" / "workers"
    for worker in sorted(workers.glob("search.*.js")):
        found = _STOP_LIST.search(worker.read_text(encoding="utf-8"))
        if found:
            return frozenset(json.loads(f"[{found.group(1)}]"))
    return frozenset()


def material_worker() -> str:
    """The site path of Material's search worker, as its base.html names it in the page's config,
    for overrides/main.html to start the handbook's worker in the page head (search-early.js);
    empty if not found, and the worker then starts when Material's bundle asks for it."""
    templates = _material_templates()
    base = templates / "base.html" if templates else None
    if base is None or not base.is_file():
        return ""
    found = _WORKER.search(base.read_text(encoding="utf-8"))
    return found.group(1) if found else ""


def split_text(text: str, title: str, separator: re.Pattern[str], stop: frozenset[str]) -> tuple[str, str]:
    """(teaser, words): the opening words as written, and every further word once."""
    plain = _SPACE.sub(" ", _TAG.sub(" ", text)).strip()
    if len(plain) <= TEASER:
        return plain, ""
    cut = plain.rfind(" ", 0, TEASER)
    cut = cut if cut > 0 else TEASER
    head = plain[:cut]
    seen = {w.lower() for w in separator.split(f"{title} {head}") if w} | stop
    order: dict[str, str] = {}
    for word in separator.split(plain[cut:]):
        if word and word.lower() not in seen:
            order.setdefault(word.lower(), word)
    kept = sorted(order)  # a word that starts the next one in order is found through it
    longer = {w for w, nxt in pairwise(kept) if nxt.startswith(w)}
    words = " ".join(word for low, word in order.items() if low not in longer)
    return f"{head} …", words


Reuse = Callable[[list[str], Callable[[], tuple[str, str]]], tuple[str, str]]


def compact_index(data: dict[str, Any], reuse: Reuse | None = None) -> dict[str, Any]:
    """The index with each section's text split into teaser and words, tags only on page entries.
    ``reuse(parts, make)``: ``make()``'s split of a section, or one kept for the same ``parts``
    (its text and title, the separator and the stop words), as under serve (kb/mkdocs/build.py)."""
    try:
        config = data["config"]
        separator = re.compile(config["separator"])
        docs = list(data["docs"])
        fields = config["fields"]
    except (KeyError, TypeError, re.error) as exc:
        raise SearchIndexError(f"search index without a usable config (separator, fields) or docs: {exc}") from None
    if WORDS not in fields:
        raise SearchIndexError(f"mkdocs.yml: plugins.search.fields has no '{WORDS}' field for a section's other words")
    stop = stop_words() if "stopWordFilter" in config.get("pipeline", []) else frozenset()
    out, every_stop = [], " ".join(sorted(stop))
    for doc in docs:
        text, title = str(doc.get("text", "")), str(doc.get("title", ""))
        split = partial(split_text, text, title, separator, stop)
        key = ["split", text, title, separator.pattern, every_stop]  # every input of the split
        teaser, words = split() if reuse is None else reuse(key, split)
        entry = {**doc, "text": teaser}
        if words:
            entry[WORDS] = words
        if "#" in str(doc.get("location", "")):
            entry.pop("tags", None)
        out.append(entry)
    return {**data, "docs": out}


def compact_file(path: Path, reuse: Reuse | None = None) -> tuple[int, int]:
    """Rewrite a built search_index.json compacted; return its size in bytes before and after
    (``reuse``: as compact_index's)."""
    raw = path.read_bytes()
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise SearchIndexError(f"{path}: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise SearchIndexError(f"{path}: not a search index (no object at the top)")
    text = json.dumps(compact_index(data, reuse), ensure_ascii=False, separators=(",", ":"))
    path.write_text(text, encoding="utf-8")
    return len(raw), len(text.encode("utf-8"))
