"""benchmarks/buildstages.py: every stage it times is a function the build has (a renamed one would
leave its stage silently at zero), and its table comes out largest difference first."""

from __future__ import annotations

import re
import sys

from mkdocs.commands import build as mkbuild
from mkdocs.structure import pages

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import buildstages  # noqa: E402


def test_every_timed_stage_is_a_function_of_the_build():
    from material.plugins.search import plugin as search

    import kb.mkdocs.build as B
    import kb.mkdocs.project as P
    import kb.site.sitecheck as S

    owners = {"P": P, "B.Build": B.Build, "S": S, "pages.Page": pages.Page, "mkbuild": mkbuild}
    owners["search.SearchPlugin"] = search.SearchPlugin
    timed = re.findall(r'^timed\(([\w.]+), "(\w+)"', buildstages.CHILD, re.M)
    assert len(timed) == 12
    for owner, name in timed:
        assert callable(getattr(owners[owner], name)), (owner, name)


def test_the_stages_are_printed_largest_difference_first(monkeypatch, capsys):
    builds = iter([{"a": 1.0, "b": 2.0, "the whole build": 3.0}, {"a": 1.5, "b": 4.0, "the whole build": 6.0}])
    monkeypatch.setattr(buildstages, "stages", lambda project: next(builds))
    monkeypatch.setattr(buildstages, "_glossary_project", lambda path, n: path)
    rows = buildstages.glossary_stages(10)
    assert [r[0] for r in rows] == ["the whole build", "b", "a"]
    assert "+3.00" in capsys.readouterr().out
