"""The printable handbook prints (issue 37, point 5): each of its parts is at most 1 MB of HTML, and
Chromium prints it to PDF, once the page has loaded, in under 10 s."""

from __future__ import annotations

import time

from kb.printpage import PARTS

from .support import report, write_artifact

MAX_BYTES = 1_000_000
MAX_PRINT_S = 10.0


def test_each_print_part_is_at_most_1_mb_and_prints_in_under_10_s(new_context, site, origin):
    page = new_context().new_page()
    rows, slow = [], []
    for part in PARTS:
        url = part.src_uri.removesuffix(".md") + "/"
        size = (site / url / "index.html").stat().st_size
        start = time.perf_counter()
        page.goto(f"{origin}/{url}", wait_until="load", timeout=120_000)
        loaded = time.perf_counter() - start
        start = time.perf_counter()
        pdf = page.pdf()
        printed = time.perf_counter() - start
        sheets = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
        rows.append({"page": f"/{url}", "bytes": size, "load_s": loaded, "print_s": printed, "sheets": sheets})
        report(
            "print", f"/{url}: {size:,} bytes, loaded in {loaded:.1f} s, printed in {printed:.1f} s, {sheets} sheets"
        )
        if size > MAX_BYTES or printed >= MAX_PRINT_S or sheets < 1:
            slow.append(f"/{url}: {size:,} bytes, printed to PDF in {printed:.1f} s ({sheets} sheets)")
    write_artifact("print.json", rows)
    assert not slow, f"print parts over {MAX_BYTES:,} bytes or {MAX_PRINT_S} s:\n" + "\n".join(slow)
