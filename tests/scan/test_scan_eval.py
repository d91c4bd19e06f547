"""benchmarks/scan_eval.py: reading the labels, reading the scanner's JSON, and scoring, on synthetic inputs.

No fetched code and no network: the one end-to-end test builds a tiny git repository of its own."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
import yaml

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import scan_eval as se  # noqa: E402

from kb.core.yamlload import parse  # noqa: E402

COMMIT = "a" * 40


def labels_from(text: str) -> list[se.RepoLabels]:
    return se.parse_labels(parse(text, "labels.yml"), "labels.yml")


def one_repo(**files: dict[int, tuple[str, ...]]) -> se.RepoLabels:
    return se.RepoLabels(
        "o/r",
        COMMIT,
        {
            path: {ln: se.Label(frozenset(labels), "why") for ln, labels in lines.items()}
            for path, lines in files.items()
        },
    )


def finding(path: str, line: int, rule: str = "rule", related: tuple[tuple[str, str, int], ...] = ()) -> se.Finding:
    return se.Finding("o/r", path, line, rule, "msg", related)


# ---- labels file ----


def test_a_valid_labels_file_is_read_with_int_lines_and_label_sets():
    repos = labels_from(
        f"- repo: o/r\n  commit: {COMMIT}\n  files:\n"
        "    a.py:\n      3: {labels: [breaks, change], why: x}\n      7: {labels: [review], why: y}\n"
        "    clean.py: {}\n"
    )
    assert [r.repo for r in repos] == ["o/r"]
    assert repos[0].files["a.py"][3].labels == frozenset({"breaks", "change"})
    assert repos[0].files["a.py"][7].why == "y"
    assert repos[0].files["clean.py"] == {}


@pytest.mark.parametrize(
    ("body", "line", "expected"),
    [
        ("    a.py:\n      3: {labels: [broken], why: x}\n", 6, "unknown label 'broken'"),
        ("    a.py:\n      three: {labels: [breaks], why: x}\n", 6, "'three' is not a line number"),
        ("    a.py:\n      3: {labels: [], why: x}\n", 6, "labels must be a non-empty list"),
        ("    a.py:\n      3: {labels: [review, review], why: x}\n", 6, "a label is repeated"),
        ("    a.py:\n      3: {labels: [review], why: ''}\n", 6, "why must be a short non-empty reason"),
        ("    a.py:\n      3: {labels: [review], why: x, note: y}\n", 6, "unknown key 'note'"),
        ("    ../a.py: {}\n", 5, "must be a relative .py path"),
    ],
)
def test_a_bad_label_is_reported_with_its_line_and_what_was_expected(body, line, expected):
    text = f"- repo: o/r\n  commit: {COMMIT}\n  files:\n  # comment\n{body}"
    with pytest.raises(se.EvalError) as exc:
        labels_from(text)
    assert str(exc.value).startswith(f"labels.yml:{line}: ")
    assert expected in str(exc.value)


def test_a_short_commit_and_a_repeated_repo_are_errors():
    text = f"- repo: o/r\n  commit: abc\n  files: {{a.py: {{}}}}\n- repo: o/r\n  commit: {COMMIT}\n  files: {{a.py: {{}}}}\n"
    with pytest.raises(se.EvalError) as exc:
        labels_from(text)
    assert "labels.yml:2: commit must be 40 lowercase hex digits" in str(exc.value)
    assert "labels.yml:4: repository o/r is listed twice" in str(exc.value)


def test_the_project_labels_file_is_valid_and_counts_every_class():
    repos = se.load_labels(se.DEFAULT_LABELS)
    every = [lab for r in repos for lines in r.files.values() for lab in lines.values()]
    assert len(repos) == 127 and sum(len(r.files) for r in repos) >= 577
    for name in se.LABELS:
        assert any(name in lab.labels for lab in every)


def test_the_corpus_is_thirty_repositories_with_a_disjoint_held_out_ten():
    """Issue 34: at least 30 labelled repositories, a frozen held-out split of at least 10 that shares
    none with the tuning split, and every style of training code among them."""
    tuning = se.load_labels(se.DEFAULT_LABELS)
    held = se.load_labels(se.DEFAULT_LABELS.with_name("scan_labels_heldout.yml"))
    names = {r.repo for r in tuning} | {r.repo for r in held}
    assert len(held) >= 10 and not {r.repo for r in tuning} & {r.repo for r in held} and len(names) >= 30
    styles = {r.style for r in [*tuning, *held] if r.style}
    assert {"raw-loop", "trainer-accelerate", "lightning", "gpt-triton-fp8", "rl", "serving"} <= styles, styles


# ---- scanner JSON ----


def test_findings_map_paths_back_to_repos_and_related_is_optional(tmp_path):
    doc = {
        "findings": [
            {"path": str(tmp_path / "o+r" / "pkg" / "a.py"), "line": 3, "rule": "r1", "message": "m"},
            {
                "path": "o+r/b.py",
                "line": 9,
                "rule": "r2",
                "related": [{"path": str(tmp_path / "o+r" / "pkg" / "a.py"), "line": 1, "column": 1}],
            },
        ]
    }
    found = se.findings_from_json(doc, tmp_path, {"o+r": "o/r"})
    assert found[0] == se.Finding("o/r", "pkg/a.py", 3, "r1", "m", ())
    assert found[1].related == (("o/r", "pkg/a.py", 1),)


def test_a_finding_outside_the_extracted_tree_is_an_error(tmp_path):
    with pytest.raises(se.EvalError, match="outside the extracted files"):
        se.findings_from_json({"findings": [{"path": "/elsewhere/x.py", "line": 1}]}, tmp_path, {"o+r": "o/r"})
    with pytest.raises(se.EvalError, match="no 'findings' list"):
        se.findings_from_json({}, tmp_path, {})


# ---- scoring ----


def test_breaks_lines_are_covered_by_a_primary_or_a_related_line_change_lines_only_by_a_primary():
    repo = one_repo(**{"a.py": {1: ("change",), 2: ("breaks",), 3: ("breaks", "change"), 4: ("breaks",)}})
    # the finding on line 3 points back at line 1 (where the device was chosen) and at line 2
    findings = [finding("a.py", 3, related=(("o/r", "a.py", 1), ("o/r", "a.py", 2)))]
    s = se.score_repo(repo, findings)
    assert (s.breaks_covered, s.breaks) == (2, 3)  # 2 by related, 3 by primary; 4 missed
    assert (s.change_covered, s.change) == (1, 2)  # 3 by primary; 1 is only related, so missed
    assert [m.line for m in s.missed_breaks] == [4]
    assert [m.line for m in s.missed_change] == [1]


def test_related_locations_in_another_file_or_repo_count_only_there():
    repo = one_repo(**{"a.py": {5: ("breaks",)}, "b.py": {5: ("breaks",)}})
    s = se.score_repo(repo, [finding("a.py", 1, related=(("o/r", "b.py", 5), ("x/y", "a.py", 5)))])
    assert [m.path for m in s.missed_breaks] == ["a.py"]


def test_a_context_finding_covers_breaks_through_its_related_places_and_is_not_scored():
    repo = one_repo(**{"model.py": {5: ("breaks",), 6: ("breaks", "change")}})
    elsewhere = se.Finding("o/r", "kernels.py", 1, "r", "", (("o/r", "model.py", 5), ("o/r", "model.py", 6)), True)
    s = se.score_repo(repo, [elsewhere, se.Finding("o/r", "model.py", 6, "r", "", (), True)])
    assert (s.breaks_covered, s.change_covered) == (2, 0)  # a context finding's own line is no primary
    assert (s.findings, s.findings_on_labels, s.false_findings) == (0, 0, [])


def test_the_tree_scan_keeps_findings_elsewhere_only_as_context_with_a_labelled_place(tmp_path, monkeypatch):
    repo = one_repo(**{"model.py": {5: ("breaks",)}})
    base = tmp_path / "o+r"

    def related(line: int) -> list[dict[str, object]]:
        return [{"path": str(base / "model.py"), "line": line, "column": 1}]

    doc = {
        "findings": [
            {"path": str(base / "model.py"), "line": 5, "rule": "a"},
            {"path": str(base / "kernels.py"), "line": 1, "rule": "b", "related": related(5)},
            {"path": str(base / "other.py"), "line": 2, "rule": "c"},
        ],
        "problems": [{"path": str(base / "other.py"), "line": 1, "message": "m"}],
    }
    monkeypatch.setattr(se, "run_scanner", lambda *a: doc)
    kept = se.scan_trees([repo], tmp_path, "python", tmp_path)
    assert [(f["rule"], f.get("context")) for f in kept["findings"]] == [("a", None), ("b", True)]
    assert kept["problems"] == []
    assert [f["rule"] for f in se.scan_trees([repo], tmp_path, "python", tmp_path, False)["findings"]] == ["a"]
    found = se.findings_from_json(kept, tmp_path, {"o+r": "o/r"})
    assert [f.context for f in found] == [False, True]


def test_precision_counts_findings_on_any_labelled_line_and_lists_the_rest():
    repo = one_repo(**{"a.py": {1: ("review",), 2: ("breaks",)}, "clean.py": {}})
    findings = [finding("a.py", 1), finding("a.py", 1, "other"), finding("a.py", 2), finding("clean.py", 4, "r9")]
    s = se.score_repo(repo, findings)
    assert (s.findings_on_labels, s.findings) == (3, 4)
    assert s.precision == 0.75
    assert [(f.path, f.line, f.rule) for f in s.false_findings] == [("clean.py", 4, "r9")]


def test_totals_add_up_over_repos_and_empty_denominators_are_none():
    a = one_repo(**{"a.py": {1: ("breaks",)}})
    b = se.RepoLabels("p/q", COMMIT, {"b.py": {2: se.Label(frozenset({"change"}), "w")}})
    per_repo, total = se.score_all([a, b], [finding("a.py", 1), se.Finding("p/q", "b.py", 3, "r")])
    assert [(s.name, s.breaks_recall, s.change_recall) for s in per_repo] == [("o/r", 1.0, None), ("p/q", None, 0.0)]
    assert (total.files, total.breaks_covered, total.change) == (2, 1, 1)
    assert (total.findings, total.findings_on_labels) == (2, 1)
    assert se.Score("empty").precision is None


def test_markdown_and_json_show_the_numbers_and_the_lists():
    repo = one_repo(**{"a.py": {1: ("breaks", "change"), 2: ("breaks",)}})
    per_repo, total = se.score_all([repo], [finding("a.py", 1), finding("a.py", 9, "noisy")])
    md = se.markdown(per_repo, total, ["o/r bad.py:1: does not parse"])
    assert "| o/r | 1 | 50% (1/2) | 100% (1/1) | 0 | 2 | 50% (1/2) |" in md
    assert "- o/r a.py:2 [breaks] why" in md
    assert "- o/r a.py:9 `noisy`" in md
    assert "does not parse" in md
    data = json.loads(se.as_json(per_repo, total))
    assert data["total"]["breaks_recall"] == 0.5 and data["total"]["precision"] == 0.5
    assert data["repos"][0]["missed_breaks"][0]["line"] == 2


# ---- extraction and the whole run ----


def test_a_missing_mirror_names_the_repo_and_the_path(tmp_path):
    with pytest.raises(se.EvalError, match=r"o/r: no mirror at .*o\+r/repo"):
        se.extract([one_repo(**{"a.py": {}})], tmp_path, tmp_path / "out")


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to build a local repository")
def test_end_to_end_on_a_local_repository_with_the_real_scanner(tmp_path, capsys):
    work = tmp_path / "work"
    work.mkdir()
    (work / "train.py").write_text("import torch\n\nx = torch.zeros(1)\ntorch.cuda.synchronize()\nprint(x)\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-C", str(work)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "train.py"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    mirror = tmp_path / "mirror" / "o+r"
    mirror.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(mirror / "repo")], check=True)
    labels = tmp_path / "labels.yml"
    labels.write_text(
        f"- repo: o/r\n  commit: {commit}\n  files:\n"
        "    train.py:\n      4: {labels: [breaks, change], why: sync}\n      5: {labels: [breaks], why: made up}\n"
    )
    code = se.main(
        ["--mirror-root", str(tmp_path / "mirror"), "--labels", str(labels), "--python", sys.executable, "--json"]
    )
    assert code == 0
    total = json.loads(capsys.readouterr().out)["total"]
    assert (total["breaks"], total["breaks_covered"], total["change_covered"]) == (2, 1, 1)
    assert [m["line"] for m in total["missed_breaks"]] == [5]
    # a label past the end of the file is an error naming the repo, the file and the line
    labels.write_text(
        f"- repo: o/r\n  commit: {commit}\n  files:\n    train.py:\n      40: {{labels: [review], why: x}}\n"
    )
    assert (
        se.main(["--mirror-root", str(tmp_path / "mirror"), "--labels", str(labels), "--python", sys.executable]) == 2
    )
    assert "o/r: train.py has 5 lines" in capsys.readouterr().err


def test_the_held_out_split_is_valid_disjoint_and_spans_the_styles():
    """The frozen held-out labels: at least ten repositories, none of them in the tuning split, each
    with its style, and the styles the corpus must span beyond raw loops all present."""
    held = se.load_labels(se.HELDOUT_LABELS)
    tuning = {r.repo for r in se.load_labels(se.DEFAULT_LABELS)}
    assert len(held) >= 10
    assert not {r.repo for r in held} & tuning
    styles = {item["style"] for item in yaml.safe_load(se.HELDOUT_LABELS.read_text())}
    assert {"trainer-accelerate", "lightning", "diffusion-gan-custom-ops", "gpt-triton-fp8", "rl", "serving"} <= styles


def test_a_second_labelling_is_scored_as_the_scanner_is(tmp_path, capsys):
    first = (
        f"- repo: o/r\n  commit: {COMMIT}\n  files:\n    a.py:\n"
        '      3: {labels: [breaks, change], why: "x"}\n      5: {labels: [breaks], why: "y"}\n'
        '      8: {labels: [review], why: "z"}\n'
    )
    second = (
        f"- repo: o/r\n  commit: {COMMIT}\n  files:\n    a.py:\n"
        '      3: {labels: [change], why: "x"}\n      8: {labels: [breaks], why: "z"}\n'
        '      9: {labels: [review], why: "w"}\n'
    )
    (tmp_path / "a.yml").write_text(first, encoding="utf-8")
    (tmp_path / "b.yml").write_text(second, encoding="utf-8")
    assert se.main(["--labels", str(tmp_path / "a.yml"), "--against", str(tmp_path / "b.yml"), "--json"]) == 0
    total = json.loads(capsys.readouterr().out)["total"]
    assert (total["breaks_covered"], total["breaks"], total["change_covered"], total["change"]) == (1, 2, 1, 1)
    assert (total["findings_on_labels"], total["findings"]) == (2, 3)
    other = second.replace("a.py", "b.py")
    (tmp_path / "b.yml").write_text(other, encoding="utf-8")
    assert se.main(["--labels", str(tmp_path / "a.yml"), "--against", str(tmp_path / "b.yml")]) == 2
    assert "o/r: the second labels must have it at commit" in capsys.readouterr().err


def test_the_union_of_two_labellings_carries_each_line_with_either_labels():
    first = labels_from(
        f'- repo: o/r\n  commit: {COMMIT}\n  files:\n    a.py:\n      3: {{labels: [change], why: "x"}}\n'
    )
    second = labels_from(
        f"- repo: o/r\n  commit: {COMMIT}\n  files:\n    a.py:\n"
        '      3: {labels: [breaks], why: "y"}\n      7: {labels: [review], why: "z"}\n'
    )
    (merged,) = se.union(first, second)
    assert {line: (sorted(lab.labels), lab.why) for line, lab in merged.files["a.py"].items()} == {
        3: (["breaks", "change"], "x"),
        7: (["review"], "z"),
    }


def test_the_second_labelling_of_the_held_out_split_labels_the_same_files():
    held = se.load_labels(se.HELDOUT_LABELS)
    second = se.load_labels(se.HELDOUT_LABELS.with_name("scan_labels_heldout.second.yml"))
    assert len(se.findings_from_labels(held, second)) >= 300  # every repo at its commit, the same files
