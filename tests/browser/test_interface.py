"""The reader-facing features the theme promises: glossary tooltips, linked content tabs that
remember the reader's platform, the light/dark toggle and copy buttons on code blocks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .support import HANG_MS, page_paths

GPU_TAB, TPU_TAB = "GPU (CUDA)", "TPU (TorchTPU)"
PREFERRED = ("migrate/device-code/", "migrate/distributed/", "migrate/quickstart/")


def html_of(site: Path, path: str) -> str:
    file = site / (path + "index.html" if path == "" or path.endswith("/") else path)
    return file.read_text(encoding="utf-8")


def pages_with(site: Path, pattern: str, under: str = "") -> list[str]:
    """Built pages (URL paths) whose article matches ``pattern``, preferred migrate pages first."""
    found = [
        p
        for p in page_paths(site)
        if p.startswith(under) and re.search(pattern, html_of(site, p).split("<article", 1)[-1])
    ]
    return sorted(found, key=lambda p: PREFERRED.index(p) if p in PREFERRED else len(PREFERRED))


def test_glossary_term_shows_a_tooltip_on_hover(new_context, site, origin):
    candidates = pages_with(site, r"<abbr title=")
    assert candidates, "no page has a glossary <abbr title=...> in its article"
    page = new_context().new_page()
    page.goto(f"{origin}/{candidates[0]}")
    abbr = page.locator("article abbr").first
    title = abbr.get_attribute("title") or ""
    assert title, "the glossary <abbr> has no title"
    abbr.scroll_into_view_if_needed()
    abbr.hover()
    # Material 9.8 (content.tooltips) renders an .md-tooltip2 with role=tooltip next to the term.
    tooltip = page.locator(".md-tooltip2--active[role=tooltip]")
    tooltip.wait_for(state="visible", timeout=HANG_MS)
    assert title.split(":")[0] in tooltip.inner_text()


def test_content_tabs_remember_the_readers_platform_across_pages(new_context, site, origin):
    pattern = re.escape(f">{TPU_TAB}<")
    tabbed = pages_with(site, pattern, under="migrate/")
    assert len(tabbed) >= 2, f"need two migrate pages with {GPU_TAB!r}/{TPU_TAB!r} tabs, found {tabbed}"
    first, second = tabbed[:2]
    # On the second page the TPU tab is not the default: the browser must bring the choice over.
    static_default = re.search(r'<input checked="checked" id="([^"]+)"', html_of(site, second))
    tpu_label = re.search(r'<label for="([^"]+)">' + re.escape(TPU_TAB) + "<", html_of(site, second))
    assert static_default and tpu_label and static_default.group(1) != tpu_label.group(1)

    page = new_context().new_page()
    page.goto(f"{origin}/{first}")
    tpu = page.locator(".tabbed-labels label", has_text=TPU_TAB).first
    tpu_input = page.locator(f"input#{tpu.get_attribute('for')}")
    assert not tpu_input.is_checked()
    tpu.click()
    assert tpu_input.is_checked()

    page.goto(f"{origin}/{second}")
    labels = page.locator(".tabbed-labels label", has_text=TPU_TAB)
    assert labels.count() >= 1
    for i in range(labels.count()):
        target = labels.nth(i).get_attribute("for")
        assert page.locator(f"input#{target}").is_checked(), (
            f"/{second}: tab {TPU_TAB!r} #{i + 1} is not selected after choosing it on /{first}"
        )


def test_light_dark_toggle_switches_and_is_remembered(new_context, origin):
    page = new_context().new_page()
    page.goto(f"{origin}/")
    scheme = "document.body.getAttribute('data-md-color-scheme')"
    assert page.evaluate(scheme) == "default"
    page.locator("form[data-md-component=palette] label:visible").click()
    page.wait_for_function(f"() => {scheme} === 'slate'")
    page.reload()
    assert page.evaluate(scheme) == "slate", "the dark scheme was not remembered across a reload"
    page.locator("form[data-md-component=palette] label:visible").click()
    page.wait_for_function(f"() => {scheme} === 'default'")


COPY_BUTTON = ".md-clipboard, .md-code__button[data-md-type=copy]"


def test_every_code_block_has_a_working_copy_button(new_context, site, origin):
    candidates = pages_with(site, r"<pre", under="migrate/")
    if not candidates:
        pytest.fail("no migrate page has a code block yet")
    ctx = new_context()
    ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=origin)
    page = ctx.new_page()
    page.goto(f"{origin}/{candidates[0]}")
    blocks = page.locator("article pre:has(> code)")
    assert blocks.count() >= 1
    for i in range(blocks.count()):
        assert blocks.nth(i).locator(COPY_BUTTON).count() == 1, (
            f"/{candidates[0]}: code block #{i + 1} has no copy button"
        )
    block = page.locator("article pre:has(> code):visible").first
    block.hover()
    block.locator(COPY_BUTTON).click()
    copied = page.evaluate("() => navigator.clipboard.readText()")
    expected = block.locator("code").inner_text()
    assert copied.strip() and copied.strip() == expected.strip()


# The end of the search box's text, and the buttons beside it once a query is typed (share, clear).
TEXT_AND_BUTTONS = """() => {
  const input = document.querySelector("input.md-search__input");
  const box = input.getBoundingClientRect();
  const textEnd = box.right - parseFloat(getComputedStyle(input).paddingRight);
  const buttons = [...document.querySelectorAll(".md-search__options > *")]
    .map(e => e.getBoundingClientRect()).filter(r => r.width > 0 && r.right > box.left && r.left < box.right);
  return {textEnd, buttons: buttons.map(r => r.left)};
}"""


@pytest.mark.parametrize("width", [1280, 390])
def test_a_long_pasted_query_never_runs_under_the_search_buttons(new_context, origin, width):
    """A pasted error message is longer than the box: its end, where the caret is, must not sit under
    the share or the clear button."""
    page = new_context(viewport={"width": width, "height": 844}).new_page()
    page.goto(f"{origin}/")
    page.evaluate(
        "() => { const t = document.getElementById('__search'); t.checked = true; t.dispatchEvent(new Event('change')); }"
    )
    page.locator("input.md-search__input").fill(
        "ValueError: Cannot set TPU device to index 1, current process is bound"
    )
    page.wait_for_function("() => document.querySelectorAll('.md-search__options > *').length > 0", timeout=HANG_MS)
    found = page.evaluate(TEXT_AND_BUTTONS)
    assert len(found["buttons"]) == 2, found
    assert found["textEnd"] <= min(found["buttons"]) + 0.5, found
