"""Every page at 1280 and 390 px, light and dark (switched in place, as the palette toggle does):
the page never scrolls sideways, the wide KB tables fit their column on a desktop, code in table
cells never breaks inside a token, chart text is at least 11 px as rendered. A screenshot of each
view these checks find at fault (its first 2,400 px, a JPEG) goes to test-artifacts/layout/; with
KB_LAYOUT_SHOTS=1, of every view."""

from __future__ import annotations

import os

import pytest

from .support import ARTIFACTS, HANG_MS, ROOT, page_paths, report, write_artifact

SHOTS = ARTIFACTS / "layout"
WIDTHS = {"desktop": 1280, "phone": 390}
# The pages whose tables must fit without scrolling at 1280 px (issue 19).
WIDE_TABLE_PAGES = ("limits/", "reference/environment-variables/", "reference/api-mapping/")
MIN_CHART_PX = 11.0
# The screenshots (artifacts for a person to look at; no check reads them) show a view's first
# 2,400 px, about three screens, as JPEGs. Up to 8,000 px, the 248 PNGs took most of this file's time
# and 200 MB; the measurements cover each whole page either way. Only the views a check finds at
# fault are shot, unless KB_LAYOUT_SHOTS=1: all 248 took about a third of this file's time.
MAX_SHOT_PX = 2400
ALL_SHOTS = os.environ.get("KB_LAYOUT_SHOTS") == "1"

# Measures the loaded page; every check below reads this one result. Code tokens and chart text,
# which the checks read in the light scheme only, are measured when ``light`` is true.
MEASURE = """light => {
  const doc = document.documentElement;
  const overflow = doc.scrollWidth - doc.clientWidth;
  const tables = [...document.querySelectorAll(".md-content table")].map((t, i) => {
    const box = t.parentElement.closest(".md-typeset__scrollwrap") || t.parentElement;
    return {index: i, width: Math.round(t.getBoundingClientRect().width),
            room: Math.round(box.clientWidth), head: t.rows[0] ? t.rows[0].innerText.slice(0, 60) : ""};
  });
  const broken = [];
  for (const code of light ? document.querySelectorAll(".md-content td code, .md-content th code") : []) {
    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (tops.size < 2) continue;
        // Where it breaks: the characters after which the next one starts a new line.
        let last = null, after = "";
        for (let i = 0; i < m[0].length; i++) {
          const one = document.createRange();
          one.setStart(node, m.index + i);
          one.setEnd(node, m.index + i + 1);
          const rect = [...one.getClientRects()].find(r => r.width > 0);
          if (!rect) continue;
          if (last !== null && Math.round(rect.top) > last + 2) after += m[0][i - 1];
          last = Math.round(rect.top);
        }
        broken.push({token: m[0], after});
      }
    }
  }
  const chartText = [...(light ? document.querySelectorAll(".kb-chart svg text") : [])].map(t => {
    const scale = t.ownerSVGElement.getScreenCTM().a;
    return {text: t.textContent.slice(0, 40), px: parseFloat(getComputedStyle(t).fontSize) * scale};
  });
  return {overflow, tables, broken, chartText};
}"""


# The dark scheme as the palette toggle applies it (transitions off, so colours settle at once).
SLATE = """() => {
  const style = document.createElement("style");
  style.textContent = "*, *::before, *::after { transition: none !important; }";
  document.head.append(style);
  document.body.setAttribute("data-md-color-scheme", "slate");
  return document.body.getAttribute("data-md-color-scheme");
}"""


@pytest.fixture(scope="module")
def layouts(browser, site, origin) -> dict[tuple[str, str, str], dict]:
    """(path, width name, scheme) -> the measurements, with a screenshot of each view at fault.
    Each page is loaded once per width, light, then switched to dark in place."""
    found = {}
    for name, width in WIDTHS.items():
        ctx = browser.new_context(viewport={"width": width, "height": 900}, color_scheme="light")
        ctx.set_default_timeout(HANG_MS)
        page = ctx.new_page()
        for path in page_paths(site):
            page.goto(f"{origin}/{path}", wait_until="load", timeout=180_000)  # about/print/ is the whole site
            for scheme in ("light", "dark"):
                if scheme == "dark":
                    assert page.evaluate(SLATE) == "slate", f"/{path}: the dark scheme did not apply"
                found[(path, name, scheme)] = view = page.evaluate(MEASURE, scheme == "light")
                if ALL_SHOTS or faults((path, name, scheme), view):
                    slug = (path.strip("/").replace("/", "_").removesuffix(".html") or "home") + f"-{name}-{scheme}"
                    _screenshot(page, width, SHOTS / f"{slug}.jpg")
        ctx.close()
    write_artifact("layout.json", {"|".join(k): v for k, v in found.items()})
    shot = "every view" if ALL_SHOTS else "the views at fault"
    report("layout", f"{len(found)} page views measured, screenshots of {shot} in {SHOTS.relative_to(ROOT)}/")
    return found


def wrong_tokens(view: dict) -> list[str]:
    """Code tokens of a view broken across lines other than where postprocess.py allows it."""
    return sorted({b["token"] for b in view["broken"] if not b["after"] or b["after"].strip("._/(")})


def small_chart_text(view: dict) -> list[dict]:
    return [t for t in view["chartText"] if t["px"] < MIN_CHART_PX]


def wide_tables(view: dict) -> list[dict]:
    return [t for t in view["tables"] if t["width"] > t["room"]]


def faults(key: tuple[str, str, str], view: dict) -> bool:
    """Whether a check below finds this view (path, width name, scheme) at fault."""
    path, name, scheme = key
    wide = name == "desktop" and path in WIDE_TABLE_PAGES and bool(wide_tables(view))
    light = scheme == "light" and bool(wrong_tokens(view) or small_chart_text(view))
    return view["overflow"] > 0 or wide or light


def _screenshot(page, width: int, path) -> None:
    """The page's first MAX_SHOT_PX pixels. A tall viewport rather than full_page: Chromium would
    first lay out the whole printable handbook at 390 px, which takes minutes."""
    tall = min(page.evaluate("document.documentElement.scrollHeight"), MAX_SHOT_PX)
    page.set_viewport_size({"width": width, "height": tall})
    page.screenshot(path=path, type="jpeg", quality=80, timeout=90_000)  # five 390 px shots: 0.66 s, PNG 1.09 s
    page.set_viewport_size({"width": width, "height": 900})


def test_every_page_was_measured_at_both_widths_and_schemes(layouts, site):
    assert len(layouts) == 4 * len(page_paths(site)) > 4
    assert any(v["tables"] for v in layouts.values()), "no table measured: the checks below are void"
    assert any(v["chartText"] for v in layouts.values()), "no chart text measured: the checks below are void"


def test_no_page_scrolls_sideways(layouts):
    wide = [f"/{p} at {w} ({s}): {v['overflow']} px too wide" for (p, w, s), v in layouts.items() if v["overflow"] > 0]
    report("layout", f"pages wider than the viewport: {len(wide)} of {len(layouts)} views")
    assert not wide, "pages that scroll sideways:\n" + "\n".join(wide)


@pytest.mark.parametrize("path", WIDE_TABLE_PAGES)
def test_tables_fit_their_column_on_a_desktop(layouts, path):
    for scheme in ("light", "dark"):
        view = layouts[(path, "desktop", scheme)]
        assert view["tables"], f"/{path}: no table found"
        wide = [f"table {t['index']} ({t['head']!r}): {t['width']} px in {t['room']} px" for t in wide_tables(view)]
        assert not wide, f"/{path} at 1280 px ({scheme}), tables that scroll sideways:\n" + "\n".join(wide)


def test_code_in_table_cells_never_breaks_inside_a_token(layouts):
    """A name in a table cell may wrap at a space or right after a dot, an underscore, a slash or an
    opening parenthesis (postprocess.py puts a <wbr> there), never inside a word or a flag."""
    bad = []
    for (path, width, scheme), v in layouts.items():
        wrong = wrong_tokens(v)
        if wrong and scheme == "light":
            bad.append(f"/{path} at {width}: {', '.join(wrong)}")
    report("layout", f"code tokens in table cells broken inside a word: {len(bad)} page views")
    assert not bad, "code tokens broken across lines in table cells:\n" + "\n".join(bad)


def test_chart_text_is_at_least_11_px(layouts):
    small = [
        f"/{p} at {w}: {t['text']!r} at {t['px']:.1f} px"
        for (p, w, s), v in layouts.items()
        if s == "light"
        for t in small_chart_text(v)
    ]
    assert not small, f"chart text under {MIN_CHART_PX} px:\n" + "\n".join(small[:20])


def test_only_a_view_a_check_finds_at_fault_is_shot():
    fine = {"overflow": 0, "tables": [{"width": 600, "room": 700}], "broken": [{"token": "a.b", "after": "."}]}
    fine["chartText"] = [{"text": "x", "px": MIN_CHART_PX}]
    assert not faults(("limits/", "desktop", "light"), fine)
    wide = {**fine, "tables": [{"width": 800, "room": 700}]}
    assert faults(("limits/", "desktop", "dark"), wide)
    assert not faults(("limits/", "phone", "dark"), wide)  # a phone's tables may scroll in their box
    assert faults(("", "phone", "dark"), {**fine, "overflow": 3})
    broken = {**fine, "broken": [{"token": "--flag", "after": "-"}]}
    assert faults(("", "phone", "light"), broken)
    assert not faults(("", "phone", "dark"), broken)  # tokens and chart text are checked light
    assert faults(("", "desktop", "light"), {**fine, "chartText": [{"text": "x", "px": 9.5}]})
