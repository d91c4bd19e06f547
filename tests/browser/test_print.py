"""The printable handbook prints (issue 37, point 5): each of its parts is at most 1 MB of HTML, and
Chromium prints it to PDF. The print time is reported against its 10 s target; only a hang fails
(HANG_MS: at load 4-10 the print page alone took over 20 s to load)."""

from __future__ import annotations

import time

from kb.render.printpage import PARTS

from .support import HANG_MS, report, write_artifact

MAX_BYTES = 1_000_000
TARGET_PRINT_S = 10.0  # reported, not asserted: timings on a shared machine are not
MAX_PRINT_S = HANG_MS / 1000  # asserted, a hang guard


def test_each_print_part_is_at_most_1_mb_and_prints(new_context, site, origin):
    page = new_context().new_page()
    rows, slow = [], []
    for part in PARTS:
        url = part.src_uri.removesuffix(".md") + "/"
        size = (site / url / "index.html").stat().st_size
        start = time.perf_counter()
        page.goto(f"{origin}/{url}", wait_until="load", timeout=HANG_MS)
        loaded = time.perf_counter() - start
        start = time.perf_counter()
        pdf = page.pdf()
        printed = time.perf_counter() - start
        sheets = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
        rows.append({"page": f"/{url}", "bytes": size, "load_s": loaded, "print_s": printed, "sheets": sheets})
        report(
            "print",
            f"/{url}: {size:,} bytes, loaded in {loaded:.1f} s, printed in {printed:.1f} s (target {TARGET_PRINT_S} s), {sheets} sheets",
        )
        if size > MAX_BYTES or printed >= MAX_PRINT_S or sheets < 1:
            slow.append(f"/{url}: {size:,} bytes, printed to PDF in {printed:.1f} s ({sheets} sheets)")
    write_artifact("print.json", rows)
    assert not slow, f"print parts over {MAX_BYTES:,} bytes or {MAX_PRINT_S} s:\n" + "\n".join(slow)
