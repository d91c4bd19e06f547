"""Under serve, the package check's problems (kb/mkdocs/project.py check_package) are reused by
part (the records, each page, each sample) only while the KB, the wheel, the pin and that part's
text are the same: an edit brings back exactly the problems a check without the cache finds."""

from __future__ import annotations

import json
from pathlib import Path

from fakewheel import build_wheel
from kb.mkdocs.pagecache import ProjectCache
from kb.mkdocs.project import validate_project

MISSING = "torch_tpu.no_such_name"


def _project(mini: Path, wheels: Path) -> Path:
    (mini / "torch-tpu.pin").write_text("torch-tpu==0.2.0\n")
    build_wheel(wheels)
    (mini / "snippets").mkdir()
    (mini / "snippets" / "s.py").write_text("import torch_tpu\n")
    return next(wheels.glob("*.whl"))


def _both(root: Path, wheel: Path, cache: ProjectCache) -> list[str]:
    """The problems through the cache, which must be those found without it."""
    cached = validate_project(root, wheel=wheel, cache=cache)
    fresh = validate_project(root, wheel=wheel)
    cache.sweep()
    assert cached.problems == fresh.problems and cached.notes == fresh.notes
    return [str(p) for p in cached.problems]


def _names(problems: list[str]) -> list[str]:
    return [p for p in problems if MISSING in p]


def test_each_edit_brings_back_exactly_the_problems_of_a_fresh_check(mini, tmp_path_factory):
    wheel, cache = _project(mini, tmp_path_factory.mktemp("w")), ProjectCache()
    assert _names(_both(mini, wheel, cache)) == []
    page = mini / "docs" / "sub" / "page.md"
    page.write_text(page.read_text() + f"\nCall `{MISSING}()`.\n")
    assert [p.split(":")[0] for p in _names(_both(mini, wheel, cache))] == ["docs/sub/page.md"]
    sample = mini / "snippets" / "s.py"
    sample.write_text(f"import torch_tpu\n{MISSING}()\n")
    assert sorted(p.split(":")[0] for p in _names(_both(mini, wheel, cache))) == ["docs/sub/page.md", "snippets/s.py"]
    page.write_text(page.read_text().replace(MISSING, "torch_tpu"))
    assert [p.split(":")[0] for p in _names(_both(mini, wheel, cache))] == ["snippets/s.py"]


def test_a_kb_edit_checks_the_records_and_messages_again(mini, tmp_path_factory):
    wheel, cache = _project(mini, tmp_path_factory.mktemp("w")), ProjectCache()
    before = _both(mini, wheel, cache)
    inventory = {
        "api": [],
        "env": [],
        "messages": [{"text": "expected a TPU device", "kind": "native", "where": "x.so"}],
    }
    (mini / "docs" / "data" / "package.json").write_text(json.dumps(inventory))
    after = _both(mini, wheel, cache)
    assert [p for p in after if "is neither an entry" in p] and not [p for p in before if "is neither an entry" in p]


def test_an_unchanged_project_reuses_every_part(mini, tmp_path_factory):
    wheel, cache = _project(mini, tmp_path_factory.mktemp("w")), ProjectCache()
    _both(mini, wheel, cache)
    validate_project(mini, wheel=wheel, cache=cache)
    hits, misses = cache.package.sweep()
    assert misses == 0 and hits == 5  # the records, two pages, one sample, the errors/messages/facts


def test_a_new_wheel_in_the_same_place_is_read_again(mini, tmp_path_factory):
    wheels = tmp_path_factory.mktemp("w")
    wheel, cache = _project(mini, wheels), ProjectCache()
    page = mini / "docs" / "sub" / "page.md"
    page.write_text(page.read_text() + f"\nCall `{MISSING}()`.\n")
    assert _names(_both(mini, wheel, cache))
    for old in wheels.iterdir():
        old.unlink()
    assert build_wheel(wheels, extra={"torch_tpu/no_such_name.py": "VALUE = 1\n"}) == wheel
    assert _names(_both(mini, wheel, cache)) == []  # the new wheel has the name


def test_a_renamed_heading_breaks_the_link_into_it_with_the_anchors_cached(mini):
    cache = ProjectCache()
    page = mini / "docs" / "sub" / "page.md"
    assert not [p for p in _both(mini, None, cache) if "details" in p]
    page.write_text(page.read_text().replace("## Details", "## More"))
    assert [p for p in _both(mini, None, cache) if "#details" in p]
    page.write_text(page.read_text().replace("## More", "## Details"))
    assert not [p for p in _both(mini, None, cache) if "details" in p]
