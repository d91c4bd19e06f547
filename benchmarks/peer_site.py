"""A project shaped like the handbook, at a chosen size, for the side-by-side benchmark (peers.py).

The project holds the real handbook (its pages, KB tables, snippets and stylesheet) plus generated
pages up to ``pages`` in all. A generated page has headings, KB shortcodes taken from the real pages
(tables, figures, claims, charts), code blocks, an admonition, GPU/TPU content tabs, links to other
pages and their ``#anchors``, an image, a raw-HTML link and links to registered sources. The site
config is the real ``mkdocs.yml`` with ``navigation.sections`` removed, so ``navigation.prune`` keeps
each page's nav small (see DESIGN.md, Known traps).

With ``faulty=True`` the project also carries each fault of ``FAULTS`` exactly once.
"""

from __future__ import annotations

import random
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PER_SECTION = 50
GEN = "bench"  # generated pages live under docs/bench/sNN/
SHORTCODE_KINDS = ("table", "figure", "claim", "limit", "mode", "chart")
# The smallest valid PNG (1x1, transparent), so generated pages have a real image to link.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)


@dataclass(frozen=True)
class Fault:
    """One injected fault: an id, what it is, and a string that only this fault puts in the site."""

    id: str
    what: str
    needle: str
    markdown: str = ""  # the text injected into its page ("" when it is injected into data instead)
    also: tuple[str, ...] = ()  # words that name this fault in a tool's message on its own page


FAULTS: tuple[Fault, ...] = (
    Fault(
        "missing-page",
        "Markdown link to a page that does not exist",
        "fault-missing-page",
        "[gone](fault-missing-page.md)",
    ),
    Fault(
        "missing-anchor",
        "Markdown link to an anchor the target page lacks",
        "fault-missing-anchor",
        "[step](page-0000.md#fault-missing-anchor)",
    ),
    Fault(
        "raw-md-link",
        "raw-HTML link to a .md file (a 404 once built)",
        "../s00/page-0000.md",
        '<a href="../s00/page-0000.md">the first page</a>',
    ),
    Fault("missing-image", "image that does not exist", "fault-missing-image", "![diagram](fault-missing-image.png)"),
    Fault(
        "external-script",
        "script loaded from another origin",
        "fault-external-script",
        '<script src="https://cdn.example.net/fault-external-script.js"></script>',
    ),
    Fault(
        "external-style",
        "stylesheet loaded from another origin",
        "fault-external-style",
        '<link rel="stylesheet" href="https://fonts.example.net/fault-external-style.css">',
    ),
    Fault(
        "unrendered-shortcode",
        "shortcode left unrendered in the built HTML (a misspelt name)",
        "kb:fault-unrendered",
        "<!-- kb:fault-unrendered api_map -->",
        ("unrendered",),
    ),
    Fault(
        "javascript-link",
        "javascript: link",
        "fault-javascript-link",
        "<a href=\"javascript:void('fault-javascript-link')\">run</a>",
        ("javascript:",),
    ),
    Fault(
        "raw-missing-anchor",
        "raw-HTML link to an anchor that does not exist",
        "fault-raw-missing-anchor",
        '<a href="#fault-raw-missing-anchor">below</a>',
    ),
    Fault(
        "table-broken-link",
        "broken anchor in a KB-rendered table (a migration rule's page anchor)",
        "fault-table-broken-link",
    ),
)


# The printable handbook (about/print.md and its parts) repeats every page's content, so every fault
# shows there a second time: what tools say about it is neither a catch nor a false positive. The
# same pages as kb.render.printpage.PRINT_PAGES (tests/bench/test_peer_site.py holds them equal).
PRINT_PAGES = ("about/print.md", *(f"about/print/part-{n}.md" for n in range(1, 5)))
REPEATS = frozenset(PRINT_PAGES)


@dataclass(frozen=True)
class Injected:
    """Where a fault was put: the file and line as written, and the page (src uri) it shows on."""

    fault: Fault
    file: str
    line: int
    page: str  # docs-relative .md path of the page that shows it


@dataclass
class Generated:
    root: Path
    pages: int  # every page, real and generated
    generated: list[str]
    injected: list[Injected]


def real_shortcodes(docs: Path) -> list[str]:
    """Shortcodes that stand alone on a line of a real page (never those quoted in inline code)."""
    found: set[str] = set()
    for path in sorted(docs.rglob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            m = re.fullmatch(r"<!-- kb:(\w+) [^>]*-->", line.strip())
            # kb:table limits links each row to its kb:limit section (#limit-...) on the same page,
            # which a generated page does not have: copied alone, its links would all be broken.
            if m and m.group(1) in SHORTCODE_KINDS and not line.strip().startswith("<!-- kb:table limits"):
                found.add(line.strip())
    return sorted(found)


def source_urls(data: Path) -> list[str]:
    urls: set[str] = set()
    for path in sorted(data.glob("sources*.yml")):
        urls.update(re.findall(r"^\s+url: (https://\S+)\s*$", path.read_text(encoding="utf-8"), re.M))
    return sorted(urls)


def page_name(i: int) -> str:
    return f"{GEN}/s{i // PER_SECTION:02d}/page-{i:04d}.md"


def _rel(target: str, start: str) -> str:
    """A link from page ``start`` to page ``target`` (both docs-relative)."""
    a, b = Path(start).parent, Path(target)
    return b.name if b.parent == a else f"../{b.parent.name}/{b.name}" if b.parent.parent == a.parent else target


def page_text(i: int, count: int, rng: random.Random, shortcodes: list[str], urls: list[str]) -> str:
    """One generated page (``count`` generated pages in all)."""
    me = page_name(i)
    links = [f"[page {j}]({_rel(page_name(j), me)}#step-{rng.randrange(3) + 1})" for j in rng.sample(range(count), 8)]
    url = urls[i % len(urls)]
    codes = [shortcodes[(i * 3 + k) % len(shortcodes)] for k in range(3)]
    return "\n".join(
        [
            "---",
            f"description: How workload {i} of the bench site moves from CUDA to TorchTPU.",
            "reviewed: 2026-11-29",
            "---",
            "",
            f"# Workload {i}: move it to TPU",
            "",
            f"This page moves workload {i} from CUDA to TorchTPU. Start with the "
            f"[checklist](../../migrate/index.md), then read {links[0]} and {links[1]}.",
            "",
            "## Step 1",
            "",
            f"Change the device string and the distributed backend. See {links[2]} and {links[3]}.",
            "",
            '!!! note "Vendor figures"',
            "",
            "    Figures on this page are labelled with who measured them and under which conditions.",
            "",
            "```python",
            "import torch",
            "",
            'device = torch.device("tpu")',
            "model = model.to(device)",
            "```",
            "",
            codes[0],
            "",
            "## Step 2",
            "",
            f"Compare the two versions; {links[4]} explains why. Also see {links[5]}.",
            "",
            '=== "GPU (CUDA)"',
            "",
            "    ```python",
            '    dist.init_process_group("nccl")',
            "    ```",
            "",
            '=== "TPU (TorchTPU)"',
            "",
            "    ```python",
            '    dist.init_process_group("tpu")',
            "    ```",
            "",
            codes[1],
            "",
            "## Step 3",
            "",
            f"![Diagram of workload {i}](../diagram.png)",
            "",
            f'Go back to <a href="#step-1">step 1</a>, read [the source]({url}) or {links[6]} and {links[7]}.',
            "",
            codes[2],
            "",
        ]
    )


def generate(dest: Path, pages: int, faulty: bool = False, seed: int = 7, as_published: bool = False) -> Generated:
    """Write the project into ``dest`` (which must not exist): ``pages`` pages in all. With
    ``published``, the site keeps the real configuration (``navigation.sections``) and the
    printable handbook, as ./dev build publishes it (bench.py's scale mode); the generated pages
    are then under migrate/ (a part of the printable handbook holds them)."""
    for name in ("docs", "snippets", "overrides"):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "torch-tpu.pin", dest / "torch-tpu.pin")
    docs = dest / "docs"
    # The printable handbook holds every page: at 5,000 generated pages it would be one page of tens
    # of megabytes that every tool reads again. The bench sites leave it out (see about/performance.md).
    published = docs / "data" / "published-urls.txt"
    for printed in () if as_published else PRINT_PAGES:
        (docs / printed).unlink()
        if published.is_file():
            text = published.read_text(encoding="utf-8")
            url = f"/{printed.removesuffix('.md')}/"
            published.write_text(text.replace(f"{url}\n", f"{url}  removed: left out of the bench sites\n"), "utf-8")
    real = len(list(docs.rglob("*.md")))
    count = max(pages - real, len(FAULTS) + 1)
    (docs / GEN).mkdir()
    (docs / GEN / "diagram.png").write_bytes(PNG)
    rng = random.Random(seed)
    shortcodes = real_shortcodes(ROOT / "docs")
    urls = source_urls(docs / "data")
    names = [page_name(i) for i in range(count)]
    texts = [page_text(i, count, rng, shortcodes, urls) for i in range(count)]
    if as_published:  # one folder down: migrate/bench/sNN/
        shutil.move(docs / GEN, docs / "migrate" / GEN)
        names = [f"migrate/{name}" for name in names]
        texts = [t.replace("](../../migrate/index.md)", "](../../index.md)") for t in texts]
    for name, text in zip(names, texts, strict=True):
        path = docs / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if published.is_file():  # every page in the nav is listed there (kb/wiki/urls.py)
        with published.open("a", encoding="utf-8") as out:
            out.write("".join(f"/{name.removesuffix('.md')}/\n" for name in names))
    injected = inject(dest, names) if faulty else []
    _write_config(dest, names, as_published)
    return Generated(dest, real + count, names, injected)


def inject(dest: Path, names: list[str]) -> list[Injected]:
    """Put each fault into the project once: page faults at the end of pages 1, 2, ...; one into data."""
    docs = dest / "docs"
    out = []
    page_faults = [f for f in FAULTS if f.markdown]
    for k, fault in enumerate(page_faults, start=1):
        name = names[k]
        path = docs / name
        text = path.read_text(encoding="utf-8")
        line = text.count("\n") + 4
        path.write_text(f"{text}\n## Notes\n\n{fault.markdown}\n", encoding="utf-8")
        out.append(Injected(fault, f"docs/{name}", line, name))
    rules = docs / "data" / "migration_rules.yml"
    lines = rules.read_text(encoding="utf-8").split("\n")
    n = next(n for n, line in enumerate(lines) if re.match(r"\s+page: \S+#\S+$", line))
    lines[n] = re.sub(r"#\S+$", "#fault-table-broken-link", lines[n])
    rules.write_text("\n".join(lines), encoding="utf-8")
    fault = next(f for f in FAULTS if not f.markdown)
    out.append(Injected(fault, "docs/data/migration_rules.yml", n + 1, "reference/scanner-rules.md"))
    return out


def _write_config(dest: Path, names: list[str], published: bool = False) -> None:
    """mkdocs.yml (with our hook) and the variants peers.py builds with: plain, render-only, htmlproofer."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    config = config if published else config.replace("    - navigation.sections\n", "")
    for printed in () if published else PRINT_PAGES:
        config = re.sub(rf"\n *- [^\n]*: {re.escape(printed)}\n", "\n", config)
    nav = "  - Generated:\n"
    sections: dict[str, list[str]] = {}
    for name in names:
        sections.setdefault(Path(name).parent.name, []).append(name)
    for sec, items in sections.items():
        nav += f"      - Section {sec}:\n" + "".join(f"          - {n}\n" for n in items)
    config = config.rstrip("\n") + "\n" + nav
    hook = "hooks:\n  - scripts/hooks.py\n"
    assert hook in config and "\nextra_css:" in config, "mkdocs.yml changed shape: update peer_site._write_config"
    variants = {
        "mkdocs.yml": config.replace(hook, f"hooks:\n  - {ROOT / 'scripts' / 'hooks.py'}\n"),
        "mkdocs.plain.yml": config.replace(hook, "").replace("strict: true", "strict: false"),
        "mkdocs.render.yml": config.replace(hook, f"hooks:\n  - {ROOT / 'benchmarks' / 'render_hook.py'}\n").replace(
            "strict: true", "strict: false"
        ),
    }
    proofer = "  - htmlproofer:\n      validate_external_urls: false\n      raise_error: false\n"
    variants["mkdocs.htmlproofer.yml"] = variants["mkdocs.render.yml"].replace(
        "\nextra_css:", "\n" + proofer + "\nextra_css:", 1
    )
    for name, text in variants.items():
        (dest / name).write_text(text, encoding="utf-8")
