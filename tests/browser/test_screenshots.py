"""Screenshots of the home page, a migration page and a search, light and dark, into
test-artifacts/screenshots/. With KB_UPDATE_SCREENSHOTS=1 the three shown in CONTRIBUTING.md are
copied to assets/screenshots/ as well (see CONTRIBUTING.md, "Screenshots"; README.md shows the first)."""

from __future__ import annotations

import os

import pytest

from .support import ARTIFACTS, ROOT, copy_file, report

SHOTS = ARTIFACTS / "screenshots"
IN_README = ("home-light.png", "device-code-dark.png", "search-light.png")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots(new_context, origin, scheme):
    page = new_context(color_scheme=scheme).new_page()
    expected = "slate" if scheme == "dark" else "default"
    taken = []
    for name, path in (("home", ""), ("device-code", "migrate/device-code/")):
        page.goto(f"{origin}/{path}")
        assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == expected
        page.screenshot(path=SHOTS / f"{name}-{scheme}.png")
        taken.append(f"{name}-{scheme}.png")
    page.goto(f"{origin}/")
    page.locator("input.md-search__input").click()
    page.keyboard.type("DeferAndFuse")
    page.locator(".md-search-result__item").first.wait_for(state="visible")
    page.wait_for_timeout(300)  # let the result list finish rendering
    page.screenshot(path=SHOTS / f"search-{scheme}.png")
    taken.append(f"search-{scheme}.png")
    for name in taken:
        assert (SHOTS / name).stat().st_size > 10_000, f"{name} looks empty"
    report("screenshots", f"{', '.join(taken)} in {SHOTS.relative_to(ROOT)}/")
    if os.environ.get("KB_UPDATE_SCREENSHOTS") == "1":
        for name in taken:
            if name in IN_README:
                copy_file(SHOTS / name, ROOT / "assets" / "screenshots" / name)
                report("screenshots", f"copied {name} to assets/screenshots/")
