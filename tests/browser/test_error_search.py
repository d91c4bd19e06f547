"""Pasting a torch-tpu error message into the search box puts its own entry first: the entry's
heading (docs/data/errors.yml and errors.messages.yml, rendered on the troubleshooting pages) is
the first section the search shows.

Every entry is pasted twice: the whole message as the program prints it (exception class first
where Python prints one, each value the code fills in as ``1``), and a fragment from its middle
(the middle half of its words), as a reader copies part of a line. The entry's page is found in the
built site by the entry's anchor, wherever the pages put it. The rates are reported and held to a
floor; the curated messages of PASTED must each be among the first three sections.
"""

from __future__ import annotations

import yaml

from .searchbox import open_search, wait_shown
from .support import ROOT, anchor_pages, path_of_url, report, write_artifact
from .test_search import run_query

ERROR_FILES = ("docs/data/errors.yml", "docs/data/errors.messages.yml")
VALUE = "…"
FILLED = "1"  # what a value reads as in a pasted message
WHOLE_FLOOR = 1.0  # share of whole messages whose entry is the first section (measured: 158/158)
FRAGMENT_FLOOR = 0.82  # the same for middle fragments (measured: 133/158; some fragments are generic)
# (what a reader pastes, the id of the errors entry that must be among the first three sections)
PASTED: list[tuple[str, str]] = [
    ("RuntimeError: cannot access or re-initialize TPU in a forked subprocess", "forked-subprocess"),
    (
        "RuntimeError: current_device is internal to TorchTPU and can only be called by the PyTorch framework "
        "(torch and torch_tpu). Use torch.accelerator.current_device_index instead.",
        "legacy-device-api",
    ),
    (
        "ValueError: Cannot set TPU device to index 3, current process is bound to device index 0. "
        "Changing the active TPU device within a process is not supported.",
        "set-device-other-index",
    ),
    (
        "RuntimeError: torch.compile(..., backend='inductor') on TPU is experimental and does not yet have full "
        "TPU support",
        "inductor-on-tpu",
    ),
    (
        "NotImplementedError: TPU backend does not support torch.compile(..., dynamic=True, ...).",
        "compile-dynamic-true",
    ),
    (
        "Unlike PyTorch on CUDA or CPU, TorchTPU doesn't by default check that the indices for take() are in range.",
        "take-indices-unchecked",
    ),
    ("because it is already opened by another process on this host.", "device-opened-by-another-process"),
    (
        "device_ids in barrier options is not supported, except device_ids=[0] which names this process's own device",
        "barrier-device-ids",
    ),
    ("NotImplementedError: P2P send is not supported on this TPU backend.", "torchcomm-p2p-send"),
    (
        "RuntimeError: handshake port 8476 is not available for usage. You can set the "
        "'TORCH_TPU_INTERNAL_HANDSHAKE_PORT' environment variable to use a different port.",
        "handshake-port-busy",
    ),
]
SECTIONS = """() => [...document.querySelectorAll(".md-search-result__item a.md-search-result__link")]
  .filter(a => !a.closest("details") && new URL(a.href).hash)
  .slice(0, 3).map(a => a.href)"""


def error_entries() -> list[dict]:
    entries: list[dict] = []
    for name in ERROR_FILES:
        entries += yaml.safe_load((ROOT / name).read_text(encoding="utf-8")) or []
    return entries


def pastes(entry: dict) -> tuple[str, str]:
    """(the whole message as printed, a fragment from its middle), values filled in."""
    message, kind = entry["message"], entry.get("kind")
    whole = f"{kind}: {message}" if kind and kind != "warning" else message
    words = message.split()
    quarter = len(words) // 4
    middle = " ".join(words[quarter : len(words) - quarter]) if len(words) > 5 else message
    return whole.replace(VALUE, FILLED), middle.replace(VALUE, FILLED)


def paste_query(page, text: str) -> list[str]:
    """Paste ``text`` into the search box (the whole message at once, as a reader does, not typed key
    by key) and return the first three section hrefs once its results are on screen."""
    box = page.locator("input.md-search__input")
    box.fill(text)
    box.press("End")  # the keyup Material's search listens for
    wait_shown(page)  # these results, not the last query's
    return page.evaluate(SECTIONS)


def sections(page, origin: str, text: str) -> list[str]:
    return [f"/{path_of_url(h.split('#')[0], origin)}#{h.split('#', 1)[1]}" for h in paste_query(page, text)]


def warm_search(new_context, origin: str):
    page = open_search(new_context, origin)
    run_query(page, "tpu")  # warm-up: the worker has loaded the index
    return page


def test_pasted_error_messages_find_their_entry_in_the_top_3(new_context, origin, site):
    where = anchor_pages(site, "err-")
    page = warm_search(new_context, origin)
    rows, misses = [], []
    for text, entry in PASTED:
        got = sections(page, origin, text)
        want = f"/{where[entry]}#err-{entry}"
        rows.append({"query": text, "expected": want, "hit": want in got, "top3": got})
        if want not in got:
            misses.append(f"{text!r}: expected {want} in the top 3 sections, got {got or 'no results'}")
    summary = f"pasted error messages: {len(rows) - len(misses)}/{len(rows)} found their entry in the top 3 sections"
    write_artifact("error-search-results.json", {"summary": summary, "queries": rows})
    report("search", summary)
    assert not misses, f"{len(misses)} miss(es):\n" + "\n".join(misses)


def test_every_error_message_pasted_whole_or_in_part_puts_its_entry_first(new_context, origin, site):
    where = anchor_pages(site, "err-")
    entries = error_entries()
    unplaced = [e["id"] for e in entries if e["id"] not in where]
    assert not unplaced, f"entries with no heading on any built page: {unplaced}"
    page = warm_search(new_context, origin)
    rows, first = [], {"whole": 0, "fragment": 0}
    last: tuple[str, list[str]] = ("", [])
    for entry in entries:
        want = f"/{where[entry['id']]}#err-{entry['id']}"
        for kind, text in zip(("whole", "fragment"), pastes(entry), strict=True):
            # a short message is its own fragment: the same query again renders nothing new
            got = last[1] if text == last[0] else sections(page, origin, text)
            last = (text, got)
            rank = got.index(want) + 1 if want in got else None
            first[kind] += rank == 1
            rows.append({"entry": entry["id"], "paste": kind, "query": text, "rank": rank, "top3": got})
    n = len(entries)
    summary = (
        f"error index, {n} entries: entry first for {first['whole']}/{n} whole messages "
        f"({first['whole'] / n:.0%}) and {first['fragment']}/{n} middle fragments ({first['fragment'] / n:.0%})"
    )
    write_artifact("error-search-all.json", {"summary": summary, "pastes": rows})
    report("search", summary)
    for row in rows:
        if row["rank"] != 1:
            report("search", f"not first ({row['paste']}, rank {row['rank']}): {row['query'][:80]!r}")
    assert first["whole"] >= WHOLE_FLOOR * n, summary
    assert first["fragment"] >= FRAGMENT_FLOOR * n, summary
