"""bench.py's ``glossary --floor``: what plain MkDocs and Material, with no hook, pay for the content
a 10,000-term glossary puts on a site (issue 39: the floor under the glossary's target).

A project of two pages (the same pinned MkDocs, Material theme and search plugin, and the
handbook's Markdown extensions), built as is and with N glossary-shaped rows: a three-column table
(the term bold after an anchor, an empty cell, the definition after its label) on the glossary
page, as Markdown or as the HTML Markdown makes of it, and with the same rows again as HTML on a
second page left out of search, as the printable handbook repeats them. Each variant: the CPU the rows add to a clean
build, the median of ``runs`` pairs of builds.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import yaml

from scalebench import _build

ROOT = Path(__file__).resolve().parents[1]
DEFINITION = "A generated term of the glossary benchmark."


def _row(k: int) -> tuple[str, str, str]:
    """One generated term's cells, as the handbook's glossary table writes them (scalebench's terms)."""
    term = f"{chr(65 + k % 26)}{chr(65 + k // 26 % 26)}Q{k}"
    return (
        f'<span class="kb-anchor" id="term-bench-term-{k}"></span>**{term}**',
        "&nbsp;",
        f'<span class="kb-label">Meaning:</span> {DEFINITION}',
    )


def markdown_table(n: int) -> str:
    lines = ["| Term | Stands for | Meaning |", "| --- | --- | --- |"]
    lines += ["| " + " | ".join(_row(k)) + " |" for k in range(n)]
    return '<div class="kb-table" markdown>\n\n' + "\n".join(lines) + "\n\n</div>\n"


def html_table(n: int) -> str:
    rows = []
    for k in range(n):
        cells = [c.replace("**", "<strong>", 1).replace("**", "</strong>", 1) for c in _row(k)]
        rows.append("<tr>\n" + "".join(f"<td>{c}</td>\n" for c in cells) + "</tr>")
    head = "<thead>\n<tr>\n<th>Term</th>\n<th>Stands for</th>\n<th>Meaning</th>\n</tr>\n</thead>"
    return f'<div class="kb-table">\n<table>\n{head}\n<tbody>\n' + "\n".join(rows) + "\n</tbody>\n</table>\n</div>\n"


def _project(folder: Path, glossary: str, printed: str) -> Path:
    """A plain MkDocs project: Material, search, the handbook's Markdown extensions, no hook."""
    docs = folder / "docs"
    docs.mkdir(parents=True)
    handbook = yaml.safe_load(_loadable((ROOT / "mkdocs.yml").read_text("utf-8")))
    config = {
        "site_name": "Floor",
        "theme": {"name": "material"},
        "plugins": ["search"],
        "markdown_extensions": handbook["markdown_extensions"],
        "nav": ["index.md", "glossary.md", "print.md"],
    }
    (folder / "mkdocs.yml").write_text(yaml.safe_dump(config), "utf-8")
    shutil.copytree(ROOT / "snippets", folder / "snippets")
    (docs / "index.md").write_text("# Home\n\nA page.\n", "utf-8")
    (docs / "glossary.md").write_text(f"# Glossary\n\nThe terms.\n\n{glossary}", "utf-8")
    front = "---\nsearch:\n  exclude: true\n---\n"  # as the handbook's print pages: not searched
    (docs / "print.md").write_text(f"{front}# Print\n\nEvery page.\n\n{printed}", "utf-8")
    return folder


def _loadable(text: str) -> str:
    """mkdocs.yml without its !ENV and !!python tags, for yaml.safe_load (only the extensions are read)."""
    return "\n".join(line for line in text.splitlines() if "!ENV" not in line and "!!python" not in line)


VARIANTS = {
    "Markdown table": lambda n: (markdown_table(n), ""),
    "HTML table": lambda n: (html_table(n), ""),
    "Markdown table + the rows again as HTML (print)": lambda n: (markdown_table(n), html_table(n)),
    "HTML table + the rows again as HTML (print)": lambda n: (html_table(n), html_table(n)),
}


def floor(n: int, runs: int, limit: float) -> dict[str, float]:
    """The median CPU seconds N rows add to a plain build, by variant (printed as they come)."""
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        plain = _project(Path(tmp) / "plain", "", "")
        made = {name: _project(Path(tmp) / f"v{i}", *make(n)) for i, (name, make) in enumerate(VARIANTS.items())}
        added: dict[str, list[float]] = {name: [] for name in VARIANTS}
        for _ in range(runs):
            base = _build(plain, limit, None)
            if base is None:
                sys.exit(f"the plain floor build stopped after {limit:.0f} s")
            for name, project in made.items():
                took = _build(project, limit, None)
                if took is not None:
                    added[name].append(took[1] - base[1])
        for name, values in added.items():
            if values:
                out[name] = statistics.median(values)
                print(f"floor, {n:,} rows, {name}: +{out[name]:.2f} s CPU (median of {len(values)})", flush=True)
    return out
