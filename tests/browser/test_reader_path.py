"""The reader's path (issue 37) at 1280 and 390 px, light and dark: the quickstart's first command
on its first screen and a command in every step, previous/next along the README's reading path,
table cells of at least 200 px at 1280 on every page with a table, badges, source links and
breadcrumbs at 12 px or more. Figures go to the terminal summary and test-artifacts/reader-path.json."""

from __future__ import annotations

import re

import pytest

from .support import ROOT, page_paths, path_of_url, report, url_path_of, write_artifact

SCREENS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
SCHEMES = ("light", "dark")
QUICKSTART = "migrate/quickstart/"
MIN_CELL_PX = 200
MIN_TEXT_PX = 12.0
# The pages whose badges and source links were smallest (7.4 px and 8.2 px in tables), and the
# API mapping, whose note column was 150 px wide.
SMALL_TEXT_PAGES = ("figures/", "reference/support-matrix/", "understand/precision-modes/", "reference/api-mapping/")
API_MAPPING = "reference/api-mapping/"
FIGURES: dict[str, object] = {}

# The first code block, and the bottom of its first line that is a command (not a comment).
FIRST_COMMAND = """() => {
  const code = document.querySelector("article pre code");
  if (!code) return null;
  const lines = code.textContent.split("\\n");
  const index = lines.findIndex(line => line.trim() && !line.trim().startsWith("#"));
  const style = getComputedStyle(code);
  const box = code.getBoundingClientRect();
  return {block: Math.round(box.top + window.scrollY), line: lines[index],
          bottom: Math.round(box.top + window.scrollY + parseFloat(style.paddingTop) + (index + 1) * parseFloat(style.lineHeight))};
}"""

# For each step (an h3 under the "Steps" h2): its title, and whether a code block or tabbed code
# sits between it and the next heading.
STEPS = """() => {
  const steps = document.getElementById("steps");
  const out = [];
  let current = null;
  for (let el = steps && steps.nextElementSibling; el && el.tagName !== "H2"; el = el.nextElementSibling) {
    if (el.tagName === "H3") { current = {title: el.textContent.replace("¶", "").trim(), command: false}; out.push(current); }
    else if (current && (el.matches("pre, .highlight, .tabbed-set") || el.querySelector(":scope > pre, .highlight"))
             && !el.closest("details")) current.command = true;
  }
  return out;
}"""

# Every table cell as laid out (a header row hidden for cards is left out), narrowest first.
CELLS = """() => [...document.querySelectorAll(".md-content table")].flatMap((t, i) =>
  [...t.rows].filter(r => { const h = r.closest("thead"); return !h || h.getBoundingClientRect().width > 1; })
    .flatMap(r => [...r.cells].map(c => ({table: i, px: Math.round(c.getBoundingClientRect().width),
                                          text: c.innerText.trim().slice(0, 40)})))
).filter(c => c.px > 0).sort((a, b) => a.px - b.px)"""

TEXT_SIZES = """() => {
  const out = {};
  for (const [name, sel] of [["badge", ".md-content .kb-badge"], ["source link", ".md-content .kb-src"],
                             ["meta", ".md-content .kb-meta"], ["breadcrumb", ".md-path__link"]]) {
    const px = [...document.querySelectorAll(sel)].filter(e => e.getClientRects().length)
      .map(e => parseFloat(getComputedStyle(e).fontSize));
    out[name] = px.length ? Math.min(...px) : null;
  }
  return out;
}"""


def open_page(new_context, origin: str, path: str, screen: str, scheme: str):
    page = new_context(viewport=SCREENS[screen], color_scheme=scheme).new_page()
    page.goto(f"{origin}/{path}", wait_until="load")
    return page


@pytest.fixture(scope="module", autouse=True)
def figures_artifact():
    yield
    write_artifact("reader-path.json", FIGURES)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("screen", sorted(SCREENS))
def test_the_quickstarts_first_command_is_on_its_first_screen(new_context, origin, screen, scheme):
    page = open_page(new_context, origin, QUICKSTART, screen, scheme)
    first = page.evaluate(FIRST_COMMAND)
    assert first is not None, "the quickstart has no code block"
    height = SCREENS[screen]["height"]
    FIGURES[f"first command, {screen} {scheme}"] = first
    report(
        "reader path",
        f"quickstart ({screen}, {scheme}; screen {height} px): code block at y={first['block']}, "
        f"first command {first['line'].strip()[:30]!r} ends at y={first['bottom']}",
    )
    assert first["bottom"] <= height, f"the first command ends at {first['bottom']} px, below the first screen"


def test_every_quickstart_step_shows_its_command(new_context, origin):
    steps = open_page(new_context, origin, QUICKSTART, "desktop", "light").evaluate(STEPS)
    assert len(steps) >= 3, f"the Steps section has {len(steps)} steps"
    missing = [s["title"] for s in steps if not s["command"]]
    assert not missing, f"steps without a command outside a collapsed note: {missing}"


def readme_reading_path() -> list[str]:
    """URL paths of the README's "Where to start reading" list, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Where to start reading", 1)[1].split("\n## ", 1)[0]
    found = re.findall(r"^\d+\. \*\*[^*]+\*\* \(`([^`]+)`\)", section, flags=re.M)
    return [url_path_of(p.removeprefix("docs/")) if p.endswith(".md") else p for p in found]


def test_previous_and_next_follow_the_readmes_reading_path(new_context, origin):
    path = readme_reading_path()
    block = re.search(r"\n  reading_path:\n((?:    - .+\n)+)", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert block, "mkdocs.yml has no extra.reading_path"
    configured = [url_path_of(p) for p in re.findall(r"- (\S+)", block[1])]
    assert configured == path, f"mkdocs.yml {configured} and the README {path} disagree"
    assert len(path) >= 5, path
    page = new_context().new_page()
    for before, after in zip(path, path[1:], strict=False):
        page.goto(f"{origin}/{before}")
        nxt = page.locator("a.md-footer__link--next").get_attribute("href") or ""
        assert path_of_url(page.evaluate(f"new URL({nxt!r}, location.href).href"), origin) == after, f"/{before}"
        page.goto(f"{origin}/{after}")
        prev = page.locator("a.md-footer__link--prev").get_attribute("href") or ""
        assert path_of_url(page.evaluate(f"new URL({prev!r}, location.href).href"), origin) == before, f"/{after}"


def pages_with_tables(site) -> list[str]:
    """Every built page (the printable parts too) with a table in its content."""
    found = []
    for path in page_paths(site):
        html = site / (path + "index.html" if path == "" or path.endswith("/") else path)
        if "<table" in html.read_text(encoding="utf-8"):
            found.append(path)
    return found


def narrow_cells(page, path: str) -> tuple[int, list[str]]:
    """The narrowest cell's width on the page, and each cell under MIN_CELL_PX."""
    cells = page.evaluate(CELLS)
    assert cells, f"/{path}: no table cell measured"
    narrow = [f"/{path} table {c['table']}: {c['px']} px {c['text']!r}" for c in cells if c["px"] < MIN_CELL_PX]
    return cells[0]["px"], narrow


@pytest.mark.parametrize("scheme", SCHEMES)
def test_no_table_cell_is_narrower_than_200_px_on_a_desktop(new_context, origin, scheme):
    """The API mapping (the page the review measured), in both schemes."""
    page = open_page(new_context, origin, API_MAPPING, "desktop", scheme)
    least, narrow = narrow_cells(page, API_MAPPING)
    FIGURES[f"min cell px, /{API_MAPPING} desktop {scheme}"] = least
    report("reader path", f"/{API_MAPPING} at 1280 ({scheme}): narrowest cell {least} px")
    assert not narrow, f"cells under {MIN_CELL_PX} px:\n" + "\n".join(narrow[:15])


def test_no_table_cell_on_any_page_is_narrower_than_200_px_on_a_desktop(new_context, origin, site):
    """Every page with a table, at 1280: a table of 4 columns or more shows its rows as cards
    (kb.css), a narrower one keeps columns of 200 px or more."""
    paths = pages_with_tables(site)
    assert len(paths) >= 10, paths
    page = new_context(viewport=SCREENS["desktop"]).new_page()
    narrow, least = [], {}
    for path in paths:
        page.goto(f"{origin}/{path}", wait_until="load")
        least[path], found = narrow_cells(page, path)
        narrow += found
    FIGURES["min cell px by page, desktop"] = least
    worst = min(least, key=least.__getitem__)
    report("reader path", f"{len(paths)} pages with tables at 1280: narrowest cell {least[worst]} px (/{worst})")
    assert not narrow, f"{len(narrow)} cells under {MIN_CELL_PX} px:\n" + "\n".join(narrow[:20])


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("screen", sorted(SCREENS))
def test_badges_source_links_and_breadcrumbs_are_at_least_12_px(new_context, origin, screen, scheme):
    page = new_context(viewport=SCREENS[screen], color_scheme=scheme).new_page()
    seen: dict[str, float] = {}
    for path in SMALL_TEXT_PAGES:
        page.goto(f"{origin}/{path}", wait_until="load")
        for name, px in page.evaluate(TEXT_SIZES).items():
            if px is not None:
                seen[name] = min(seen.get(name, px), px)
    FIGURES[f"min text px, {screen} {scheme}"] = seen
    report(
        "reader path", f"smallest text ({screen}, {scheme}): " + ", ".join(f"{k} {v:.1f} px" for k, v in seen.items())
    )
    assert {"badge", "source link", "breadcrumb"} <= set(seen), f"not measured: {seen}"
    small = {k: v for k, v in seen.items() if v < MIN_TEXT_PX}
    assert not small, f"text under {MIN_TEXT_PX} px: {small}"


@pytest.mark.parametrize("screen", sorted(SCREENS))
def test_nested_pages_show_breadcrumbs(new_context, origin, screen):
    page = open_page(new_context, origin, QUICKSTART, screen, "light")
    crumbs = page.locator("nav.md-path a.md-path__link")
    assert crumbs.count() >= 2 and crumbs.first.is_visible(), "no breadcrumbs above the quickstart"
    assert [crumbs.nth(i).inner_text().strip() for i in range(crumbs.count())][:2] == ["Home", "Migrate"]
