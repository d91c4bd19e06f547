"""Speed-table records (kb.core.schema.SpeedRun) for the figures that are not times: the hook's cost over plain
MkDocs, page weights and the scale ratio. Written to docs/data/speed.yml by editbench.write_run, the one writer,
and shown on about/performance.md."""

from __future__ import annotations

import datetime
import os
import statistics
import sys
from pathlib import Path
from typing import Any

HOOK_TARGET = 1.25  # issue 39: a build with the hook costs at most 1.25x plain MkDocs on the rendered pages
SCALE_TARGET = 25.0  # issue 39: a 1,000-page site builds in at most 25x the 40-page time
WEIGHT_TARGETS_KB = {  # issue 39: the most each may weigh, in KB (1,000 bytes)
    "content-page-weight": 150.0,
    "print-part-weight": 1000.0,
    "search-index-weight": 400.0,
}


def figure_record(what: str, values: list[float], target: float, unit: str, command: str, note: str) -> dict[str, Any]:
    """One run's figures as a record of the speed table, dated today, with the machine and the load average."""
    from peers import machine

    if not values:
        sys.exit(f"{what}: nothing was measured, so nothing was recorded")
    day = datetime.date.today().isoformat()
    load = f"load average over the last minute at the end of the run: {os.getloadavg()[0]:.2f}."
    return {
        "id": f"{what}-{day}",
        "what": what,
        "measured": day,
        "machine": machine(),
        "command": command,
        "runs": len(values),
        "unit": unit,
        "median_s": round(statistics.median(values), 2),
        "min_s": round(min(values), 2),
        "max_s": round(max(values), 2),
        "target_s": target,
        "note": f"{note} The {load}" if note else f"The {load}",
    }


def weight_records(site: Path, heaviest: int, heaviest_print: int, command: str) -> list[dict[str, Any]]:
    """The heaviest content page, the heaviest print part and the search index of ``site``, one record each."""
    index = site / "search" / "search_index.json"
    if not index.is_file():
        sys.exit(f"{index}: no search index in the built site, so the weights were not recorded")
    sizes = {
        "content-page-weight": heaviest,
        "print-part-weight": heaviest_print,
        "search-index-weight": index.stat().st_size,
    }
    return [
        figure_record(what, [size / 1000], WEIGHT_TARGETS_KB[what], "KB", command, f"{size:,} bytes.")
        for what, size in sizes.items()
    ]


def scale_record(times: dict[int, tuple[int, float, float]], command: str) -> dict[str, Any]:
    """The wall time of the 1,000-page build over that of the smallest build, as the scale-build record."""
    if 40 not in times or 1000 not in times:
        sys.exit(f"scale: built only {sorted(times)} pages, expected 40 and 1000, so nothing was recorded")
    (small_n, small, small_cpu), (large_n, large, large_cpu) = times[40], times[1000]
    note = (
        f"One clean strict build of each site: the smallest, {small_n:,} pages (--sizes 40; the handbook alone once "
        f"it holds more), {small:.1f} s wall, {small_cpu:.1f} s CPU; {large_n:,} pages, {large:.1f} s wall, "
        f"{large_cpu:.1f} s CPU ({large_cpu / small_cpu:.1f}x in CPU time)."
    )
    return figure_record("scale-build", [large / small], SCALE_TARGET, "x", command, note)


def write(records: list[dict[str, Any]]) -> None:
    import editbench

    for record in records:
        editbench.write_run(editbench.SPEED_FILE, record)
    print(f"recorded in {editbench.SPEED_FILE.relative_to(editbench.ROOT)}: {', '.join(r['id'] for r in records)}")
