"""README.md is for readers (short, the two commands, where to start) and links CONTRIBUTING.md,
which holds the rest; every relative link and image of both files resolves, anchors included."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT

DOCS = ("README.md", "CONTRIBUTING.md")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """The anchor GitHub and GitLab give a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, flags=re.M)}


def test_readme_is_short_and_for_readers() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150, "README.md should stay at most 150 lines"
    for needed in ("./dev serve", "-a HOST:PORT", "./dev test", "./dev scan", "Python 3.11", "(CONTRIBUTING.md"):
        assert needed in text, f"README.md should mention {needed}"
    for page in ("quickstart", "worked-port", "scan-your-code", "troubleshooting"):
        assert f"migrate/{page}/" in text, f"README.md should point readers at migrate/{page}/"


def test_readme_names_only_pages_that_exist() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for url in re.findall(r"`((?:migrate|understand|limits|figures|reference|about)/[\w/-]*)/`", text):
        assert (ROOT / "docs" / f"{url}.md").is_file() or (ROOT / "docs" / url / "index.md").is_file(), url


@pytest.mark.parametrize("name", DOCS)
def test_links_resolve(name: str) -> None:
    text = re.sub(r"```.*?```", "", (ROOT / name).read_text(encoding="utf-8"), flags=re.S)
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = ROOT / path if path else ROOT / name
        assert file.exists(), f"{name}: link to {target}: no such file"
        if anchor:
            assert anchor in anchors(file), f"{name}: link to {target}: no such heading"
