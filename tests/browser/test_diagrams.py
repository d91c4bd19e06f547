"""The diagrams (docs/data/diagrams.yml, drawn by kb/render/diagrams.py) in Chromium: each page that has
one renders it with no console error and no request to another origin, in light and dark, on a
desktop and a phone, in print and from the file:// bundle. Screenshots of every diagram go to
test-artifacts/screenshots/diagrams/ (look at them after a change to a diagram or to kb.css)."""

from __future__ import annotations

import re

import pytest

from .support import ARTIFACTS, ROOT, allowed_request, report, url_path_of

SHOTS = ARTIFACTS / "screenshots" / "diagrams"
SHORTCODE = re.compile(r"<!--\s*kb:diagram\s+([a-z0-9-]+)\s*-->")


def diagram_pages() -> dict[str, list[str]]:
    """docs source path -> the diagram ids it shows, from the pages themselves."""
    found = {}
    for md in sorted((ROOT / "docs").rglob("*.md")):
        ids = SHORTCODE.findall(md.read_text(encoding="utf-8"))
        if ids:
            found[md.relative_to(ROOT / "docs").as_posix()] = ids
    return found


PAGES = diagram_pages()

# What each figure looks like once drawn: sizes, colours and its accessible name.
MEASURE = """() => [...document.querySelectorAll("figure.kb-diagram")].map(fig => {
  const svg = fig.querySelector("svg");
  const ids = (svg.getAttribute("aria-labelledby") || "").split(" ").filter(Boolean);
  const named = ids.map(id => document.getElementById(id)).filter(el => el && svg.contains(el));
  const rect = svg.getBoundingClientRect();
  const label = svg.querySelector("text.kb-diagram__label, text.kb-diagram__note");
  const box = svg.querySelector("rect.kb-diagram__box");
  const px = [...svg.querySelectorAll("text")].map(t => parseFloat(getComputedStyle(t).fontSize));
  return {id: fig.id, role: svg.getAttribute("role"), names: named.map(el => el.textContent),
          width: rect.width, right: rect.right, scale: rect.width / svg.viewBox.baseVal.width,
          minFont: Math.min(...px), texts: px.length,
          textFill: getComputedStyle(label).fill, boxFill: getComputedStyle(box).fill,
          lineStroke: getComputedStyle(svg.querySelector(".kb-diagram__edge, rect")).stroke,
          asText: fig.querySelectorAll(".kb-diagram__text li").length};
})"""


def open_page(new_context, origin: str, path: str, **options):
    ctx = new_context(**options)
    outside: list[str] = []
    errors: list[str] = []
    ctx.on("request", lambda r: None if allowed_request(r.url, origin) else outside.append(r.url))
    ctx.route(lambda url: not allowed_request(url, origin), lambda route: route.abort())
    page = ctx.new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{origin}/{path}", wait_until="load")
    page.wait_for_load_state("networkidle")
    return page, outside, errors


def test_at_least_four_pages_have_a_diagram():
    assert len(PAGES) >= 4, PAGES


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("src", sorted(PAGES))
def test_diagram_renders_legibly(new_context, origin, src, scheme):
    page, outside, errors = open_page(new_context, origin, url_path_of(src), color_scheme=scheme)
    figures = page.evaluate(MEASURE)
    assert [f["id"] for f in figures] == [f"diagram-{i}" for i in PAGES[src]]
    for fig in figures:
        assert fig["role"] == "img" and len(fig["names"]) == 2 and all(fig["names"]), fig  # title and desc
        assert fig["asText"] >= 2, f"{fig['id']}: no text version"
        assert fig["minFont"] * fig["scale"] >= 13, f"{fig['id']}: text drawn at {fig['minFont'] * fig['scale']:.1f} px"
        # Drawn at its own size (600 px), not stretched to the column by Material's svg rule.
        assert 480 <= fig["width"] <= 600.5, f"{fig['id']}: drawn {fig['width']:.0f} px wide"
        assert fig["textFill"] != fig["boxFill"], f"{fig['id']}: text and box share the colour {fig['textFill']}"
        page.locator(f"#{fig['id']}").screenshot(path=SHOTS / f"{fig['id'].removeprefix('diagram-')}-{scheme}.png")
    assert not outside, f"requests to another origin: {outside}"
    assert not errors, f"console errors: {errors}"
    report("diagrams", f"{src} ({scheme}): {', '.join(PAGES[src])} in {SHOTS.relative_to(ROOT)}/")


@pytest.mark.parametrize("src", sorted(PAGES))
def test_diagram_fits_a_phone_and_stays_legible(new_context, origin, src):
    page, _, errors = open_page(new_context, origin, url_path_of(src), viewport={"width": 390, "height": 844})
    for fig in page.evaluate(MEASURE):
        # The drawing keeps its minimum width and scrolls inside its own box, not the page.
        assert fig["minFont"] * fig["scale"] >= 11, f"{fig['id']}: text drawn at {fig['minFont'] * fig['scale']:.1f} px"
        box = page.locator(f"#{fig['id']}").bounding_box()
        assert box is not None and box["x"] + box["width"] <= 390, f"{fig['id']}: the figure runs past the screen"
        page.locator(f"#{fig['id']}").screenshot(path=SHOTS / f"{fig['id'].removeprefix('diagram-')}-phone.png")
    assert not errors, errors


def test_diagram_prints_black_on_white_from_the_dark_scheme(new_context, origin):
    src = sorted(PAGES)[0]
    page, _, _ = open_page(new_context, origin, url_path_of(src), color_scheme="dark")
    before = page.evaluate(MEASURE)[0]
    page.emulate_media(media="print")
    printed = page.evaluate(MEASURE)[0]
    assert before["textFill"] != "rgb(0, 0, 0)", "the dark scheme draws text in black: the check proves nothing"
    assert (printed["textFill"], printed["boxFill"]) == ("rgb(0, 0, 0)", "rgb(255, 255, 255)"), printed
    assert printed["width"] <= 600.5, f"printed {printed['width']:.0f} px wide"


def test_diagrams_in_the_file_bundle(new_context, offline_site):
    ctx = new_context()
    outside: list[str] = []
    ctx.on("request", lambda r: None if r.url.startswith(("file:", "data:")) else outside.append(r.url))
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    for src, ids in sorted(PAGES.items()):
        page.goto((offline_site / src.replace(".md", ".html")).as_uri())
        shown = page.evaluate("[...document.querySelectorAll('figure.kb-diagram svg text')].length")
        assert shown > len(ids), f"{src}: no diagram drawn from file://"
    assert not outside and not errors, (outside, errors)


# At 390 px: the drawing's box, what it says about itself, and what the reader sees of the text.
PHONE = """() => [...document.querySelectorAll("figure.kb-diagram")].map(fig => {
  const box = fig.querySelector(".kb-diagram__scroll");
  const hint = fig.querySelector(".kb-diagram__hint");
  const answers = [...fig.querySelectorAll("rect.kb-diagram__box--answer")].map(r => {
    const rect = r.getBoundingClientRect(), outer = box.getBoundingClientRect();
    return Math.round(rect.right - outer.left + box.scrollLeft);
  });
  const items = [...fig.querySelectorAll(".kb-diagram__text li")];
  return {id: fig.id, scrolls: box.scrollWidth > box.clientWidth + 1, scrollWidth: box.scrollWidth,
          tabindex: box.getAttribute("tabindex"), role: box.getAttribute("role"), label: box.getAttribute("aria-label"),
          hint: !!hint && hint.getClientRects().length > 0 && getComputedStyle(hint).visibility === "visible",
          textOpen: items.length > 0 && items.every(li => li.getClientRects().length > 0),
          answers, shown: items.filter(li => li.getClientRects().length).map(li => li.textContent)};
})"""
PHONE_SIZE = {"width": 390, "height": 844}


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("src", sorted(PAGES))
def test_on_a_phone_a_scrolling_diagram_takes_the_keyboard_says_so_and_shows_its_text(new_context, origin, src, scheme):
    page, _, errors = open_page(new_context, origin, url_path_of(src), viewport=PHONE_SIZE, color_scheme=scheme)
    for fig in page.evaluate(PHONE):
        assert fig["textOpen"], f"{fig['id']}: the text version is not shown at 390 px"
        if not fig["scrolls"]:
            continue
        assert (fig["tabindex"], fig["role"]) == ("0", "region") and fig["label"], f"{fig['id']}: {fig}"
        assert fig["hint"], f"{fig['id']}: scrolls at 390 px with no visible cue"
        assert all(right <= fig["scrollWidth"] + 1 for right in fig["answers"]), f"{fig['id']}: an answer is cut off"
        box = page.locator(f"#{fig['id']} .kb-diagram__scroll")
        box.focus()
        assert page.evaluate("document.activeElement.classList.contains('kb-diagram__scroll')")
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"document.querySelector('#{fig['id']} .kb-diagram__scroll').scrollLeft > 0")
    assert not errors, errors


def test_the_execution_modes_decision_tree_keeps_its_answers_on_a_phone(new_context, origin):
    import yaml

    data = yaml.safe_load((ROOT / "docs" / "data" / "diagrams.yml").read_text(encoding="utf-8"))
    (tree,) = [d for d in data if d["id"] == "eager-modes"]
    answers = [n for n in tree["nodes"] if n["kind"] == "answer"]
    src = next(s for s, ids in PAGES.items() if "eager-modes" in ids)
    page, _, _ = open_page(new_context, origin, url_path_of(src), viewport=PHONE_SIZE)
    (fig,) = [f for f in page.evaluate(PHONE) if f["id"] == "diagram-eager-modes"]
    assert len(fig["answers"]) == len(answers) >= 3, fig  # every answer box drawn, inside the scroll area
    shown = " ".join(fig["shown"])
    for node in answers:
        words = re.sub(r"[`*]", "", node["note"]).split(";")[0].strip()
        assert words in shown, f"answer {node['id']!r} ({words!r}) is not in the text shown at 390 px"
    report(
        "diagrams", f"{src} at 390: {len(answers)} answers in the text version, drawing {fig['scrollWidth']} px wide"
    )


@pytest.mark.parametrize("src", sorted(PAGES))
def test_axe_finds_nothing_on_a_diagram_page_at_390_px(browser, origin, src):
    from axe_playwright_python.sync_playwright import Axe

    from .crawl import DARK_CONTRAST, ONLY_VIOLATIONS

    ctx = browser.new_context(viewport=PHONE_SIZE, color_scheme="light")
    try:
        page = ctx.new_page()
        page.goto(f"{origin}/{url_path_of(src)}", wait_until="load")
        light = Axe().run(page, options=ONLY_VIOLATIONS).response["violations"]
        dark = page.evaluate(DARK_CONTRAST)["violations"]
    finally:
        ctx.close()
    found = [f"{v['id']} ({len(v['nodes'])} nodes)" for v in light] + [f"dark {v['id']}" for v in dark]
    report("diagrams", f"axe at 390 on {src}: {len(found)} violations")
    assert not found, f"{src} at 390 px: {found}"
