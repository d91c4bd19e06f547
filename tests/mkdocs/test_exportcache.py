"""Under serve, kb.json's text (kb/mkdocs/export.py) is reused only while docs/data and the pin are
the same: a KB edit is always in the next kb.json, exactly as a build without the cache writes it."""

from __future__ import annotations

from pathlib import Path

from kb.mkdocs.build import Build
from kb.mkdocs.export import export_project
from kb.mkdocs.project import validate_project


def _both(build: Build, root: Path, tmp: Path) -> str:
    build.pre_build(root, lambda _: None)
    (tmp / "cached").mkdir(exist_ok=True)
    (tmp / "fresh").mkdir(exist_ok=True)
    build.export(root, tmp / "cached")
    export_project(validate_project(root, package=False), root, tmp / "fresh")
    cached = (tmp / "cached" / "kb.json").read_text("utf-8")
    assert cached == (tmp / "fresh" / "kb.json").read_text("utf-8")
    return cached


def test_a_kb_edit_or_a_new_pin_is_in_the_next_kb_json(mini, tmp_path_factory):
    build, tmp = Build(serving=True), tmp_path_factory.mktemp("site")
    first = _both(build, mini, tmp)
    assert _both(build, mini, tmp) == first and build.cache.derived.sweep() == (1, 1)
    glossary = mini / "docs" / "data" / "glossary.yml"
    glossary.write_text(glossary.read_text().replace("Memory next to the chip.", "Memory beside the chip."))
    edited = _both(build, mini, tmp)
    assert "Memory beside the chip." in edited and "Memory next to the chip." not in edited
    (mini / "torch-tpu.pin").write_text("torch-tpu==0.2.0\n")
    assert '"torch_tpu": "torch-tpu==0.2.0"' in _both(build, mini, tmp)
