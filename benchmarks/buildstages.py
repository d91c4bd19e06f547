"""bench.py's ``glossary --stages``: where the CPU N glossary terms add to a build goes, stage by stage.

The handbook as is and with N generated terms (scalebench's projects) are each built once in a
child process that wraps the build's stages in CPU timers (no profiler, so the figures are the
build's own): the hook's steps, Markdown's conversion, Material's search plugin, the templates.
Stages nest (validation holds the KB's loading); the built-site check's worker processes are not
counted. Printed: each stage's CPU in both builds and the difference, largest difference first.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from scalebench import ENV, ROOT, _glossary_project

CHILD = r"""
import collections, json, sys, time
T = collections.defaultdict(float)

def timed(owner, name, label):
    f = getattr(owner, name)
    def run(*a, **k):
        start = time.process_time()
        try:
            return f(*a, **k)
        finally:
            T[label] += time.process_time() - start
    setattr(owner, name, run)

from mkdocs.structure import pages
from mkdocs.commands import build as mkbuild
from material.plugins.search import plugin as search
import kb.mkdocs.build as B, kb.mkdocs.project as P, kb.site.sitecheck as S
timed(P, "_read_kb", "validation: loading the KB")
timed(P, "read_pages", "validation: the pages (shortcodes rendered)")
timed(B.Build, "pre_build", "validation, whole")
timed(B.Build, "page", "hook: each page's Markdown (tooltip lines)")
timed(pages.Page, "render", "Markdown conversion")
timed(search.SearchPlugin, "on_page_context", "Material's search plugin (each page)")
timed(B.Build, "printable", "hook: the printable handbook's parts")
timed(B.Build, "finish", "hook: each page's HTML fixed and slimmed")
timed(mkbuild, "_build_page", "templates and writing, with the three above")
timed(B.Build, "export", "hook: kb.json export")
timed(B.Build, "compact_search", "hook: search index compacted")
timed(S, "check_site", "built-site check (this process)")
from mkdocs.__main__ import cli
start = time.process_time()
try:
    cli(["build", "--strict", "-q", "-d", "site"])
except SystemExit as exc:
    if exc.code:
        raise
T["the whole build"] = time.process_time() - start
print(json.dumps(T))
"""


def stages(project: Path) -> dict[str, float]:
    env = {**ENV, "PYTHONPATH": str(project / "scripts")}
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=project, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"the build of {project} failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def glossary_stages(n: int) -> list[tuple[str, float, float]]:
    """(stage, CPU s as is, CPU s with ``n`` terms), largest difference first (printed as a table)."""
    with tempfile.TemporaryDirectory() as tmp:
        plain = stages(_glossary_project(Path(tmp) / "p0", 0))
        grown = stages(_glossary_project(Path(tmp) / f"p{n}", n))
    rows = sorted(((k, plain.get(k, 0.0), v) for k, v in grown.items()), key=lambda r: r[1] - r[2])
    print(f"{'stage':<56} {'as is':>7} {f'+{n:,}':>8} {'added':>7}")
    for name, before, after in rows:
        print(f"{name:<56} {before:7.2f} {after:8.2f} {after - before:+7.2f}", flush=True)
    return rows


if __name__ == "__main__":
    glossary_stages(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
    print(f"(the handbook at {ROOT})")
