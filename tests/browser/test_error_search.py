"""Pasting a torch-tpu error message into the search box finds its entry (a heading of the
troubleshooting page, from docs/data/errors.yml) among the first three sections the search shows.

Each query is the message as the program prints it, values filled in, exception class first where
Python prints one. The entry's heading must be one of the first three section results (links with a
#fragment, in the order shown, leaving out the collapsed "more on this page" lists).
"""

from __future__ import annotations

from .support import HANG_MS, path_of_url, report, write_artifact
from .test_search import INSTRUMENT, QUIET, RENDERED, run_query

PAGE = "migrate/troubleshooting/"
# (what a reader pastes, the id of the errors entry that must come up)
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


def paste_query(page, text: str) -> list[str]:
    """Paste ``text`` into the search box (the whole message at once, as a reader does, not typed key
    by key) and return the first three section hrefs once the results have settled."""
    box = page.locator("input.md-search__input")
    box.fill(text)
    box.press("End")  # the keyup Material's search listens for
    page.wait_for_function(RENDERED, timeout=HANG_MS)  # these results, not the last query's
    page.wait_for_function(QUIET, arg=300, timeout=HANG_MS)
    return page.evaluate(SECTIONS)


def test_pasted_error_messages_find_their_entry_in_the_top_3(new_context, origin):
    page = new_context().new_page()
    page.goto(f"{origin}/")
    page.evaluate(INSTRUMENT)
    page.locator("input.md-search__input").click()
    run_query(page, "tpu")  # warm-up: the worker has loaded the index

    rows, misses = [], []
    for text, entry in PASTED:
        got = [f"/{path_of_url(h.split('#')[0], origin)}#{h.split('#', 1)[1]}" for h in paste_query(page, text)]
        want = f"/{PAGE}#err-{entry}"
        hit = want in got
        rows.append({"query": text, "expected": want, "hit": hit, "top3": got})
        if not hit:
            misses.append(f"{text!r}: expected {want} in the top 3 sections, got {got or 'no results'}")
    hits = sum(r["hit"] for r in rows)
    summary = f"pasted error messages: {hits}/{len(rows)} found their entry in the top 3 sections"
    write_artifact("error-search-results.json", {"summary": summary, "queries": rows})
    report("search", summary)
    print(summary)
    assert not misses, f"{len(misses)} miss(es):\n" + "\n".join(misses)
