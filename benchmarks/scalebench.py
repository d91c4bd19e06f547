"""bench.py's ``scale`` and ``glossary`` modes: how the build grows with the pages and the glossary.

``scale``: the handbook grown to N pages by peer_site.py, kept as ./dev build publishes it (the
real mkdocs.yml with ``navigation.sections``, and the printable handbook), built with our hook,
``mkdocs build --strict``. Each size: wall and CPU time, the ratio to the smallest size, the HTML
written; with ``--profile``, the functions that take the largest share of the build (cProfile's
cumulative time, proportions only: the profiler slows every call).

``glossary``: the real handbook's pages against a glossary of N generated terms: the time to find
the terms each page uses (render._used_terms, which also builds the term index once), in a child
process per size, stopped at ``--limit`` seconds so that a slow size can't hang the bench. With
``--build``: whole builds of the handbook as is and with N generated terms in its glossary, wall
and CPU time (the CPU time is what the terms cost; the wall time also counts the other tenants);
with ``--write``, the CPU 10,000 terms added, over ``--runs`` pairs of builds, is recorded in
docs/data/speed.yml (:func:`glossary_speed_record`), which about/performance.md shows.
"""

from __future__ import annotations

import json
import os
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from peer_site import generate

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}


class BuildFailed(SystemExit):
    """A build that exited non-zero, with its times: not caught, it ends the bench with its message."""

    def __init__(self, project: Path, wall: float, cpu: float, errors: str) -> None:
        super().__init__(f"the build of {project} failed after {wall:.1f} s wall, {cpu:.1f} s CPU:\n{errors}")
        self.wall, self.cpu, self.errors = wall, cpu, errors


def _build(project: Path, limit: float, profile: Path | None) -> tuple[float, float] | None:
    """(wall s, CPU s) of one strict build of ``project`` with our hook; None when stopped at ``limit``."""
    prof = ["-m", "cProfile", "-o", str(profile)] if profile else []
    cmd = [sys.executable, *prof, "-m", "mkdocs", "build", "--strict", "-d", "site"]
    env = {**ENV, "PYTHONPATH": str(ROOT / "scripts")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return None
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode:
        raise BuildFailed(project, wall, cpu, done.stderr[-3000:])
    return wall, cpu


def _shares(profile: Path, top: int = 20) -> list[str]:
    """The functions with the largest cumulative share (below the build's own frames, over 90%),
    then the largest own shares."""
    table = pstats.Stats(str(profile)).stats  # type: ignore[attr-defined]
    total = max(ct for (_, _, _, ct, _) in table.values())

    def line(key: tuple[str, int, str], tt: float, ct: float) -> str:
        where = "/".join(Path(key[0]).parts[-2:])
        return f"    {100 * ct / total:5.1f}% cum {100 * tt / total:5.1f}% own  {where}:{key[1]} {key[2]}"

    rows = [(k, v[2], v[3]) for k, v in table.items() if v[3] < 0.9 * total]
    out = ["  by cumulative share:"] + [line(*r) for r in sorted(rows, key=lambda r: r[2], reverse=True)[:top]]
    return out + ["  by own share:"] + [line(*r) for r in sorted(rows, key=lambda r: r[1], reverse=True)[:top]]


def _weight(site: Path) -> str:
    sizes = sorted((p.stat().st_size, p.relative_to(site).as_posix()) for p in site.rglob("*.html"))
    total = sum(s for s, _ in sizes)
    big = ", ".join(f"{name} {s / 1e6:.1f} MB" for s, name in sizes[-3:])
    return f"{len(sizes)} HTML files, {total / 1e6:.1f} MB (largest: {big})"


def _keep(project: Path, keep: Path) -> None:
    """A copy editbench.py --project can serve: the project with ./dev, its pins and the hook's code."""
    shutil.rmtree(keep, ignore_errors=True)
    shutil.copytree(project, keep, ignore=shutil.ignore_patterns("site"))
    for name in ("dev", "requirements.txt", "requirements-test.txt", "requirements-bench.txt"):
        shutil.copy2(ROOT / name, keep / name)
    shutil.copytree(ROOT / "scripts", keep / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
    config = keep / "mkdocs.yml"
    config.write_text(config.read_text("utf-8").replace(str(ROOT / "scripts"), "scripts"), "utf-8")


def run(sizes: list[int], limit: float, profile: bool, keep: Path | None) -> dict[int, tuple[int, float, float]]:
    """Build a generated site of each size; return (pages, wall s, CPU s) by size asked, for the sizes that built
    (a size below the handbook's own page count makes a site of the handbook alone)."""
    first: float | None = None
    times: dict[int, tuple[int, float, float]] = {}
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            made = generate(Path(tmp) / "p", size, as_published=True)
            try:
                took = _build(made.root, limit, None)
            except BuildFailed as failed:  # a size the build refuses: how long it took to say so
                print(f"{made.pages} pages: the build failed after {failed.wall:.1f} s wall, {failed.cpu:.1f} s CPU:")
                print("\n".join(failed.errors.splitlines()[-5:]), flush=True)
                continue
            if took is None:
                print(f"{made.pages} pages: stopped after {limit:.0f} s", flush=True)
                continue
            wall, cpu = took
            times[size] = (made.pages, wall, cpu)
            first = first or wall
            print(
                f"{made.pages} pages: build {wall:.1f} s wall, {cpu:.1f} s CPU ({wall / first:.1f}x the first size); "
                f"{_weight(made.root / 'site')}",
                flush=True,
            )
            if profile:
                out = Path(tmp) / "build.prof"
                if _build(made.root, limit * 3, out) is not None:
                    print("\n".join(_shares(out)), flush=True)
            if keep is not None and size == sizes[-1]:
                _keep(made.root, keep)
                if profile and (Path(tmp) / "build.prof").is_file():
                    shutil.copy2(Path(tmp) / "build.prof", keep / "build.prof")
                print(f"kept in {keep}: benchmarks/editbench.py --project {keep}", flush=True)
    return times


GLOSSARY_CHILD = r"""
import json, random, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from kb.render import render
from kb.core.load import read_kb
from kb.core.schema import Term

n, root = int(sys.argv[2]), Path(sys.argv[3])
kb, _ = read_kb(root / "docs" / "data")
rng = random.Random(7)
words = ["tensor", "chip", "mesh", "core", "shard", "graph", "fusion", "TPU", "XLA", "HBM"]
real = [r.model.term for r in kb.rows("glossary", Term)]
terms = list(real)
while len(terms) < n:  # acronyms, and phrases that begin with another term (the shadowed case)
    k = len(terms)
    acronym = "".join(rng.choice("ABCDEFGHKLMNPRSTVX") for _ in range(rng.randrange(2, 6))) + str(k)
    terms.append(acronym if k % 3 else f"{rng.choice(real + words)} {rng.choice(words)}{k}")
pages = [p.read_text("utf-8") for p in sorted((root / "docs").rglob("*.md"))]
start = time.perf_counter()
used = sum(len(render._used_terms(tuple(terms), page)) for page in pages)
print(json.dumps({"terms": len(terms), "pages": len(pages), "used": used, "seconds": time.perf_counter() - start}))
"""


def _glossary_record(k: int) -> str:
    """A generated glossary record: a term no page uses but the glossary's own (as most terms of a
    large glossary are), beginning with any letter (the abbr extension's pattern tries every term
    that begins with the letter it meets)."""
    return (
        f"- id: bench-term-{k}\n  term: {chr(65 + k % 26)}{chr(65 + k // 26 % 26)}Q{k}\n"
        "  definition: A generated term of the glossary benchmark.\n"
        "  verified: 2026-11-30\n  checked_against: torch-tpu==0.2.0\n"
    )


def _glossary_project(project: Path, n: int) -> Path:
    """A copy of the real handbook with ``n`` generated terms added to its glossary."""
    for name in ("docs", "snippets", "overrides", "scripts"):
        shutil.copytree(ROOT / name, project / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("mkdocs.yml", "torch-tpu.pin", "frameworks.pin"):
        shutil.copy2(ROOT / name, project / name)
    for part in range(0, n, 2_000):  # a file holds at most 50,000 values: parts of 2,000 terms
        records = "".join(_glossary_record(k) for k in range(part, min(n, part + 2_000)))
        (project / "docs" / "data" / f"glossary.bench-{part // 2_000:03d}.yml").write_text(records, "utf-8")
    return project


def glossary_build(sizes: list[int], limit: float, runs: int = 1) -> dict[int, list[float]]:
    """The real handbook built as is and with N generated terms added to its glossary (the glossary
    page and the printable handbook list them all), ``runs`` times each, each size's build paired
    with the plain build before it. For each size: the CPU seconds the terms added, run by run."""
    added: dict[int, list[float]] = {n: [] for n in sizes}
    with tempfile.TemporaryDirectory() as tmp:
        projects = {n: _glossary_project(Path(tmp) / f"p{n}", n) for n in [0, *sizes]}
        for _ in range(runs):
            plain = _build(projects[0], limit, None)
            if plain is None:
                sys.exit(f"the plain build stopped after {limit:.0f} s")
            print(f"+0 terms: build {plain[0]:.1f} s wall, {plain[1]:.1f} s CPU", flush=True)
            for n in sizes:
                took = _build(projects[n], limit, None)
                if took is None:
                    print(f"+{n} terms: the build stopped after {limit:.0f} s", flush=True)
                    continue
                added[n].append(took[1] - plain[1])
                print(
                    f"+{n} terms: build {took[0]:.1f} s wall, {took[1]:.1f} s CPU "
                    f"(+{took[1] - plain[1]:.1f} s CPU, +{took[0] - plain[0]:.1f} s wall)",
                    flush=True,
                )
    return added


def glossary(sizes: list[int], limit: float) -> None:
    for n in sizes:
        cmd = [sys.executable, "-c", GLOSSARY_CHILD, str(ROOT / "scripts"), str(n), str(ROOT)]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=limit)
        except subprocess.TimeoutExpired:
            print(f"{n} terms: stopped after {limit:.0f} s", flush=True)
            continue
        if done.returncode:
            sys.exit(f"{n} terms failed:\n{done.stderr[-3000:]}")
        r = json.loads(done.stdout)
        print(
            f"{r['terms']} terms: the terms of {r['pages']} pages found in {r['seconds']:.2f} s "
            f"({r['used']} uses; the term index built once, as a build does)",
            flush=True,
        )


KB_EDIT_CHILD = r"""
import json, shutil, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from kb.mkdocs.pagecache import ProjectCache
from kb.mkdocs.project import validate_project

root, tables = Path(sys.argv[2]), sys.argv[3].split(",")
out = []
with tempfile.TemporaryDirectory() as tmp:
    project = Path(tmp) / "p"
    for name in ("docs", "snippets", "overrides"):
        shutil.copytree(root / name, project / name)
    for name in ("mkdocs.yml", "torch-tpu.pin", "frameworks.pin"):
        shutil.copy2(root / name, project / name)
    cache = ProjectCache()
    validate_project(project, package=False, cache=cache)
    cache.sweep()
    for table in tables:
        path = project / "docs" / "data" / f"{table}.yml"
        path.write_text(path.read_text("utf-8") + "# edited\n", "utf-8")  # new bytes, same records
        start = time.perf_counter()
        validate_project(project, package=False, cache=cache)
        seconds = time.perf_counter() - start
        reused, made = cache.sweep()
        out.append({"table": table, "reused": reused, "made": made, "seconds": seconds})
print(json.dumps(out))
"""


def kb_edit(tables: list[str]) -> None:
    """Under serve's cache (kb/mkdocs/pagecache.py): the handbook validated, then one table edited at a
    time (a comment appended: new bytes, the same records); how many pages' shortcodes were
    rendered again, and the validation's time (without the package check)."""
    cmd = [sys.executable, "-c", KB_EDIT_CHILD, str(ROOT / "scripts"), str(ROOT), ",".join(tables)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"the KB edit bench failed:\n{done.stderr[-3000:]}")
    for r in json.loads(done.stdout):
        print(
            f"{r['table']}.yml edited: {r['made']} of {r['reused'] + r['made']} pages rendered again, "
            f"validation {r['seconds']:.2f} s",
            flush=True,
        )


GLOSSARY_TARGET_S = 1.0  # issue 39: a 10,000-term glossary adds at most 1 s to a build
FLOOR = "HTML table + the rows again as HTML (print)"  # glossfloor's variant the record's plain_s gives


def glossary_speed_record(
    added: list[float], command: str, day: str, machine: str, floors: dict[str, float] | None = None
) -> dict[str, Any]:
    """The CPU 10,000 terms added to a build, as a record of the KB's speed table (kb.core.schema.SpeedRun);
    ``floors``: what plain MkDocs paid for the same rows, by variant (glossfloor.py), said in the note."""
    floors = floors or {}
    floor = "".join(f" {name}: +{s:.2f} s." for name, s in floors.items())
    plain = {"plain_s": round(floors[FLOOR], 2)} if FLOOR in floors else {}
    return {
        "id": f"glossary-build-{day}",
        "what": "glossary-build",
        "measured": day,
        "machine": machine,
        "command": command,
        "runs": len(added),
        "median_s": round(statistics.median(added), 2),
        "min_s": round(min(added), 2),
        "max_s": round(max(added), 2),
        "target_s": GLOSSARY_TARGET_S,
        **plain,
        "note": (
            "CPU time of a clean strict build of the handbook with 10,000 generated glossary terms, minus "
            "that of the handbook as is, built just before it; load average over the last minute at the end "
            f"of the run: {os.getloadavg()[0]:.2f}."
            + (f" The floor, the CPU the same rows add to a plain MkDocs and Material build:{floor}" if floor else "")
        ),
    }
