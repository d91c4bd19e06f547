"""Score `kb scan` against hand labels of real GPU training code (benchmarks/scan_labels.yml).

  python benchmarks/scan_eval.py [--mirror-root /work/.mirror] [--labels PATH] [--project PATH] [--json] [--tree]
                                 [--no-context] [--against LABELS | --union LABELS]

Each labelled file is extracted at its recorded commit from a bare mirror (``<mirror-root>/<owner>+<name>/repo``,
read with ``git show COMMIT:PATH``) into a temporary folder, which ``python -m kb --root PROJECT scan --format json``
then scans (PYTHONPATH=PROJECT/scripts, the project's venv python). With ``--tree`` every Python file of each
repository is extracted too and each repository is scanned whole, as a user runs the scanner, so what one file
imports from another counts; only findings in labelled files are scored. A finding in a file nobody labelled is
context: it is not scored, but its ``related`` places in labelled files cover ``breaks`` lines as any finding's do
(a call in ``model.py`` of a function of ``kernels.py`` that fails inside is a place of the finding in
``kernels.py``); ``--no-context`` drops such findings, as this script did before round ten. Printed, per repository
and in total:

- recall on ``breaks`` lines: a line is covered when a finding's primary line, or one of its ``related``
  locations, is on it;
- recall on ``change`` lines: covered only by a finding's primary line;
- precision: the share of findings whose primary line carries any label (breaks, change or review);

then the missed lines (with the labeller's reason) and the findings on unlabelled lines. ``--json`` prints the
same as one JSON object. ``--project`` picks which checkout's scanner runs (default: this one).
``--against LABELS`` scores a second, independent labelling of the same files in its place, each
labelled line one finding: the agreement of two labellers, the ceiling a scanner scored against one
of them can be expected to reach. ``--union LABELS`` scores the scanner against both labellings
merged (each line with the labels either gave it). Exit status: 0
after a report, 2 when the labels, the mirror or the scanner cannot be used (with the file and line, or the repo,
that is wrong).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from kb.core.errors import Problem  # noqa: E402
from kb.core.yamlload import Located, YAMLProblem, load_file  # noqa: E402

LABELS = ("breaks", "change", "review")
# The kinds of training code the corpus spans (issue 34): a repository's optional ``style``.
STYLES = ("raw-loop", "trainer-accelerate", "lightning", "diffusion-gan-custom-ops", "gpt-triton-fp8", "rl", "serving")
DEFAULT_LABELS = ROOT / "benchmarks" / "scan_labels.yml"
HELDOUT_LABELS = ROOT / "benchmarks" / "scan_labels_heldout.yml"  # frozen: no rule is tuned on it
DEFAULT_MIRROR = Path("/work/.mirror")
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_LINE = re.compile(r"^[1-9][0-9]*$")


class EvalError(Exception):
    """Something the eval cannot work with; the message names the file and line or the repo."""


# ---- labels ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Label:
    labels: frozenset[str]
    why: str


@dataclass(frozen=True)
class RepoLabels:
    repo: str
    commit: str
    files: dict[str, dict[int, Label]]
    style: str = ""  # one of STYLES, or "" when the entry names none


def parse_labels(located: Located, shown: str) -> list[RepoLabels]:
    """Check the parsed labels file and return it as records; every problem names ``shown:line``."""
    problems: list[Problem] = []

    def bad(path: tuple[str | int, ...], message: str) -> None:
        problems.append(Problem(shown, located.line(path), message))

    data = located.data
    if not isinstance(data, list):
        raise EvalError(str(Problem(shown, 1, "expected a list of repositories")))
    out: list[RepoLabels] = []
    seen_repos: set[str] = set()
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            bad((i,), "expected a mapping with repo, commit and files")
            continue
        for key in sorted(set(item) - {"repo", "commit", "style", "files"}):
            bad((i, key), f"unknown key '{key}' (expected repo, commit, style, files)")
        if "style" in item and item["style"] not in STYLES:
            bad((i, "style"), f"style '{item['style']}' is not one of {', '.join(STYLES)}")
        repo, commit, files = item.get("repo"), item.get("commit"), item.get("files")
        if not isinstance(repo, str) or not _REPO.match(repo):
            bad((i, "repo"), "repo must be owner/name")
            continue
        if repo in seen_repos:
            bad((i, "repo"), f"repository {repo} is listed twice (expected each once)")
        seen_repos.add(repo)
        if not isinstance(commit, str) or not _COMMIT.match(commit):
            bad((i, "commit"), "commit must be 40 lowercase hex digits")
            continue
        if not isinstance(files, dict) or not files:
            bad((i, "files"), "files must be a mapping of path to labelled lines")
            continue
        parsed: dict[str, dict[int, Label]] = {}
        for path, lines in files.items():
            where = (i, "files", path)
            posix = PurePosixPath(path)
            if posix.is_absolute() or ".." in posix.parts or not path.endswith(".py"):
                bad(where, f"'{path}' must be a relative .py path inside the repository")
                continue
            if not isinstance(lines, dict):
                bad(where, "expected a mapping of line number to {labels, why} ({} for none)")
                continue
            parsed[path] = {}
            for line, entry in lines.items():
                at = where + (line,)
                if not _LINE.match(line):
                    bad(at, f"'{line}' is not a line number (expected a positive integer)")
                    continue
                label = _parse_entry(entry, at, bad)
                if label is not None:
                    parsed[path][int(line)] = label
        style = item.get("style")
        out.append(RepoLabels(repo, commit, parsed, style if isinstance(style, str) else ""))
    if problems:
        raise EvalError("\n".join(str(p) for p in sorted(problems)))
    return out


def _parse_entry(entry: object, at: tuple[str | int, ...], bad: Any) -> Label | None:
    if not isinstance(entry, dict):
        bad(at, "expected {labels: [...], why: ...}")
        return None
    for key in sorted(set(entry) - {"labels", "why"}):
        bad(at + (key,), f"unknown key '{key}' (expected labels, why)")
    labels, why = entry.get("labels"), entry.get("why")
    ok = True
    if not isinstance(labels, list) or not labels or not all(isinstance(x, str) for x in labels):
        bad(at + ("labels",), f"labels must be a non-empty list of {', '.join(LABELS)}")
        ok = False
    else:
        unknown = [x for x in labels if x not in LABELS]
        if unknown:
            bad(at + ("labels",), f"unknown label '{unknown[0]}' (expected {', '.join(LABELS)})")
            ok = False
        elif len(set(labels)) != len(labels):
            bad(at + ("labels",), "a label is repeated (expected each once)")
            ok = False
    if not isinstance(why, str) or not why.strip():
        bad(at + ("why",), "why must be a short non-empty reason")
        ok = False
    return Label(frozenset(labels), why) if ok else None  # type: ignore[arg-type]  # checked above


def load_labels(path: Path) -> list[RepoLabels]:
    shown = os.path.relpath(path) if path.is_absolute() else str(path)
    try:
        located = load_file(path, shown)
    except YAMLProblem as exc:
        raise EvalError(str(exc.problem)) from None
    return parse_labels(located, shown)


# ---- findings ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    repo: str
    path: str
    line: int
    rule: str
    message: str = ""
    related: tuple[tuple[str, str, int], ...] = ()  # (repo, path, line)
    context: bool = False  # in a file nobody labelled: only its related places count (breaks)


def _split(raw_path: str, scanned: Path) -> tuple[str, str] | None:
    """Map a path the scanner printed back to (repo folder, path in repo); None when outside the scanned tree."""
    p = Path(raw_path)
    if p.is_absolute():
        try:
            p = p.resolve().relative_to(scanned.resolve())
        except ValueError:
            return None
    parts = PurePosixPath(p.as_posix()).parts
    if len(parts) < 2:
        return None
    return parts[0], "/".join(parts[1:])


def findings_from_json(doc: dict[str, Any], scanned: Path, folders: dict[str, str]) -> list[Finding]:
    """Findings of one ``kb scan --format json`` run over ``scanned``, whose top folders name repos (``folders``
    maps folder -> owner/name). ``related`` (a list of {path, line, column}) is optional."""
    raw = doc.get("findings")
    if not isinstance(raw, list):
        raise EvalError("scanner output has no 'findings' list (expected kb scan --format json)")
    out: list[Finding] = []
    for n, f in enumerate(raw):
        if not isinstance(f, dict) or not isinstance(f.get("path"), str) or not isinstance(f.get("line"), int):
            raise EvalError(f"scanner finding #{n + 1} has no path and line (expected kb scan --format json)")
        where = _split(f["path"], scanned)
        if where is None or where[0] not in folders:
            raise EvalError(f"scanner finding #{n + 1} is outside the extracted files: {f['path']}")
        related: list[tuple[str, str, int]] = []
        for r in f.get("related") or []:
            if isinstance(r, dict) and isinstance(r.get("path"), str) and isinstance(r.get("line"), int):
                rw = _split(r["path"], scanned)
                if rw is not None and rw[0] in folders:
                    related.append((folders[rw[0]], rw[1], r["line"]))
        out.append(
            Finding(
                folders[where[0]],
                where[1],
                f["line"],
                str(f.get("rule", "?")),
                str(f.get("message", "")),
                tuple(related),
                f.get("context") is True,
            )
        )
    return out


# ---- scoring (pure) ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Missed:
    repo: str
    path: str
    line: int
    labels: tuple[str, ...]
    why: str


@dataclass(frozen=True)
class FalseFinding:
    repo: str
    path: str
    line: int
    rule: str
    message: str


@dataclass
class Score:
    name: str
    files: int = 0
    breaks: int = 0
    breaks_covered: int = 0
    change: int = 0
    change_covered: int = 0
    review: int = 0
    findings: int = 0
    findings_on_labels: int = 0
    missed_breaks: list[Missed] = field(default_factory=list)
    missed_change: list[Missed] = field(default_factory=list)
    false_findings: list[FalseFinding] = field(default_factory=list)

    @property
    def breaks_recall(self) -> float | None:
        return self.breaks_covered / self.breaks if self.breaks else None

    @property
    def change_recall(self) -> float | None:
        return self.change_covered / self.change if self.change else None

    @property
    def precision(self) -> float | None:
        return self.findings_on_labels / self.findings if self.findings else None

    def add(self, other: Score) -> None:
        for name in ("files", "breaks", "breaks_covered", "change", "change_covered", "review", "findings"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.findings_on_labels += other.findings_on_labels
        self.missed_breaks += other.missed_breaks
        self.missed_change += other.missed_change
        self.false_findings += other.false_findings


def score_repo(labels: RepoLabels, findings: Iterable[Finding]) -> Score:
    """Score one repository's findings against its labels (findings of other repos are ignored)."""
    everything = [f for f in findings if f.repo == labels.repo]
    mine = [f for f in everything if not f.context]
    primary = {(f.path, f.line) for f in mine}
    touched = primary | {(p, ln) for f in everything for (r, p, ln) in f.related if r == labels.repo}
    s = Score(labels.repo, files=len(labels.files))
    for path, lines in sorted(labels.files.items()):
        for line, label in sorted(lines.items()):
            missed = Missed(labels.repo, path, line, tuple(x for x in LABELS if x in label.labels), label.why)
            if "breaks" in label.labels:
                s.breaks += 1
                if (path, line) in touched:
                    s.breaks_covered += 1
                else:
                    s.missed_breaks.append(missed)
            if "change" in label.labels:
                s.change += 1
                if (path, line) in primary:
                    s.change_covered += 1
                else:
                    s.missed_change.append(missed)
            if "review" in label.labels:
                s.review += 1
    for f in sorted(mine, key=lambda f: (f.path, f.line, f.rule)):
        s.findings += 1
        if f.line in labels.files.get(f.path, {}):
            s.findings_on_labels += 1
        else:
            s.false_findings.append(FalseFinding(f.repo, f.path, f.line, f.rule, f.message))
    return s


def score_all(repos: Sequence[RepoLabels], findings: Sequence[Finding]) -> tuple[list[Score], Score]:
    per_repo = [score_repo(r, findings) for r in repos]
    total = Score("total")
    for s in per_repo:
        total.add(s)
    return per_repo, total


# ---- output -------------------------------------------------------------------------------------------------------


def _pct(num: int, den: int) -> str:
    return f"{100 * num / den:.0f}% ({num}/{den})" if den else "n/a (0/0)"


def markdown(per_repo: Sequence[Score], total: Score, problems: Sequence[str] = ()) -> str:
    rows = [
        "| repo | files | breaks covered | change covered | review lines | findings | precision |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for s in [*per_repo, total]:
        name = f"**{s.name}**" if s is total else s.name
        rows.append(
            f"| {name} | {s.files} | {_pct(s.breaks_covered, s.breaks)} | {_pct(s.change_covered, s.change)} "
            f"| {s.review} | {s.findings} | {_pct(s.findings_on_labels, s.findings)} |"
        )
    out = ["## Scanner against hand labels", "", *rows]
    for title, missed in (("breaks", total.missed_breaks), ("change", total.missed_change)):
        out += ["", f"### Missed `{title}` lines ({len(missed)})", ""]
        out += [f"- {m.repo} {m.path}:{m.line} [{', '.join(m.labels)}] {m.why}" for m in missed] or ["- none"]
    out += ["", f"### Findings on unlabelled lines ({len(total.false_findings)})", ""]
    out += [
        f"- {f.repo} {f.path}:{f.line} `{f.rule}`: line judged fine when labelling; scanner says: {f.message}"
        for f in total.false_findings
    ] or ["- none"]
    if problems:
        out += ["", "### Files the scanner did not scan", "", *[f"- {p}" for p in problems]]
    return "\n".join(out) + "\n"


def as_json(per_repo: Sequence[Score], total: Score, problems: Sequence[str] = ()) -> str:
    def one(s: Score) -> dict[str, Any]:
        d = asdict(s)
        d.update(breaks_recall=s.breaks_recall, change_recall=s.change_recall, precision=s.precision)
        return d

    return json.dumps({"repos": [one(s) for s in per_repo], "total": one(total), "problems": list(problems)}, indent=2)


# ---- extraction and scanning --------------------------------------------------------------------------------------


def folder_of(repo: str) -> str:
    return repo.replace("/", "+")


def extract(repos: Sequence[RepoLabels], mirror_root: Path, dest: Path) -> None:
    """Write every labelled file at its commit under ``dest/<owner>+<name>/``; fail naming the repo and file."""
    for r in repos:
        git_dir = mirror_root / folder_of(r.repo) / "repo"
        if not git_dir.is_dir():
            raise EvalError(f"{r.repo}: no mirror at {git_dir} (expected a bare git directory; fetch the repository)")
        for path, lines in r.files.items():
            done = subprocess.run(
                ["git", f"--git-dir={git_dir}", "show", f"{r.commit}:{path}"], capture_output=True, check=False
            )
            if done.returncode != 0:
                why = done.stderr.decode("utf-8", "replace").strip().splitlines()
                raise EvalError(f"{r.repo}: cannot read {path} at {r.commit[:12]}: {why[-1] if why else 'git failed'}")
            n_lines = len(done.stdout.splitlines())
            beyond = [ln for ln in lines if ln > n_lines]
            if beyond:
                raise EvalError(
                    f"{r.repo}: {path} has {n_lines} lines at {r.commit[:12]}, labels name line {beyond[0]}"
                )
            target = dest / folder_of(r.repo) / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(done.stdout)


def extract_trees(repos: Sequence[RepoLabels], mirror_root: Path, dest: Path) -> None:
    """Write every Python file of each repository at its commit under ``dest/<owner>+<name>/`` (what a user
    scans), after ``extract`` has checked and written the labelled files. A blob the mirror lacks is left out."""
    for r in repos:
        git = ["git", f"--git-dir={mirror_root / folder_of(r.repo) / 'repo'}"]
        listed = subprocess.run([*git, "ls-tree", "-r", "-z", r.commit], capture_output=True, check=False)
        if listed.returncode != 0:
            raise EvalError(f"{r.repo}: git ls-tree {r.commit[:12]} failed: {listed.stderr.decode('utf-8', 'replace')}")
        blobs = []
        for entry in listed.stdout.split(b"\0"):
            meta, _, name = entry.partition(b"\t")
            if meta.startswith(b"100") and name.endswith(b".py") and b".." not in name.split(b"/"):
                blobs.append((meta.split()[2], name.decode("utf-8", "replace")))
        batch = b"".join(sha + b"\n" for sha, _ in blobs)
        out = subprocess.run([*git, "cat-file", "--batch"], input=batch, capture_output=True, check=False).stdout
        at = 0
        for _, name in blobs:
            header_end = out.index(b"\n", at)
            header = out[at:header_end].split()
            at = header_end + 1
            if len(header) < 3 or header[1] != b"blob":  # "<sha> missing"
                continue
            size = int(header[2])
            target = dest / folder_of(r.repo) / name
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(out[at : at + size])
            at += size + 1


def default_python(project: Path) -> str:
    venv = project / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def run_scanner(project: Path, python: str, scanned: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(project / "scripts")}
    cmd = [python, "-m", "kb", "--root", str(project), "scan", "--format", "json", str(scanned)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if done.returncode not in (0, 1):  # 1 means something must change: a normal outcome here
        raise EvalError(f"scanner exited {done.returncode}: {done.stderr.strip() or done.stdout.strip()}")
    try:
        doc = json.loads(done.stdout)
    except json.JSONDecodeError as exc:
        raise EvalError(f"scanner output is not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(doc, dict):
        raise EvalError("scanner output is not a JSON object")
    return doc


def scan_trees(
    repos: Sequence[RepoLabels], project: Path, python: str, scanned: Path, context: bool = True
) -> dict[str, Any]:
    """Each repository's tree scanned on its own (so one repository's modules never stand for another's),
    keeping the findings and problems in labelled files, and (``context``) the findings elsewhere that have a
    related place in a labelled file, marked ``context``: their places count, they are not scored."""
    labelled = {f"{folder_of(r.repo)}/{path}" for r in repos for path in r.files}
    doc: dict[str, Any] = {"findings": [], "problems": []}
    for r in repos:
        one = run_scanner(project, python, scanned / folder_of(r.repo))
        for key in ("findings", "problems"):
            for item in one.get(key) or []:
                where = _split(str(item.get("path", "")), scanned) if isinstance(item, dict) else None
                if where is not None and f"{where[0]}/{where[1]}" in labelled:
                    doc[key].append(item)
                elif context and key == "findings" and where is not None and _touches(item, labelled, scanned):
                    doc[key].append({**item, "context": True})
    return doc


def _touches(item: dict[str, Any], labelled: set[str], scanned: Path) -> bool:
    """Whether a finding has a related place in a labelled file."""
    for r in item.get("related") or []:
        where = _split(str(r.get("path", "")), scanned) if isinstance(r, dict) else None
        if where is not None and f"{where[0]}/{where[1]}" in labelled:
            return True
    return False


def evaluate(
    repos: Sequence[RepoLabels],
    mirror_root: Path,
    project: Path,
    python: str,
    tree: bool = False,
    context: bool = True,
) -> tuple[list[Score], Score, list[str]]:
    with tempfile.TemporaryDirectory(prefix="scan-eval-") as tmp:
        scanned = Path(tmp)
        extract(repos, mirror_root, scanned)
        if tree:
            extract_trees(repos, mirror_root, scanned)
        doc = scan_trees(repos, project, python, scanned, context) if tree else run_scanner(project, python, scanned)
        folders = {folder_of(r.repo): r.repo for r in repos}
        findings = findings_from_json(doc, scanned, folders)
        problems = []
        for p in doc.get("problems") or []:
            if isinstance(p, dict):
                where = _split(str(p.get("path", "")), scanned)
                shown = f"{folders.get(where[0], where[0])} {where[1]}" if where else str(p.get("path"))
                problems.append(f"{shown}:{p.get('line', '?')}: {p.get('message', '')}")
    per_repo, total = score_all(repos, findings)
    return per_repo, total, problems


def _matched(repos: Sequence[RepoLabels], other: Sequence[RepoLabels]) -> dict[str, RepoLabels]:
    """``other`` by repository, once each of ``repos`` is found there at the same commit with the same
    files (EvalError otherwise)."""
    given = {r.repo: r for r in other}
    for r in repos:
        o = given.get(r.repo)
        if o is None or o.commit != r.commit or set(o.files) != set(r.files):
            raise EvalError(f"{r.repo}: the second labels must have it at commit {r.commit} with the same files")
    return given


def findings_from_labels(repos: Sequence[RepoLabels], other: Sequence[RepoLabels]) -> list[Finding]:
    """A second labeller's labels (``other``) as findings, one per labelled line, to score against
    ``repos`` as the scanner is scored: how far two people who label the same files agree."""
    given = _matched(repos, other)
    return [
        Finding(r.repo, path, line, "label")
        for r in repos
        for path, lines in given[r.repo].files.items()
        for line in lines
    ]


def union(repos: Sequence[RepoLabels], other: Sequence[RepoLabels]) -> list[RepoLabels]:
    """``repos`` with a second labelling of the same files merged in: each line carries the labels
    either labeller gave it (precision against the union: a finding no labeller marked is wrong)."""
    given = _matched(repos, other)
    out = []
    for r in repos:
        files: dict[str, dict[int, Label]] = {}
        for path, lines in r.files.items():
            theirs = given[r.repo].files[path]
            files[path] = {}
            for line in sorted(set(lines) | set(theirs)):
                both = [x for x in (lines.get(line), theirs.get(line)) if x is not None]
                files[path][line] = Label(frozenset().union(*(x.labels for x in both)), both[0].why)
        out.append(RepoLabels(r.repo, r.commit, files, r.style))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror-root", type=Path, default=DEFAULT_MIRROR, help="folder of <owner>+<name>/repo mirrors")
    ap.add_argument("--labels", type=Path, default=DEFAULT_LABELS, help="the labels file")
    ap.add_argument("--project", type=Path, default=ROOT, help="checkout whose scanner runs (default: this one)")
    ap.add_argument("--python", help="python that runs the scanner (default: PROJECT/.venv/bin/python)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of Markdown")
    ap.add_argument("--tree", action="store_true", help="scan each repository's whole tree, as a user does")
    ap.add_argument(
        "--no-context", action="store_true", help="with --tree: drop findings outside labelled files (before round ten)"
    )
    ap.add_argument("--against", type=Path, help="score this second labels file of the same files, not the scanner")
    ap.add_argument("--union", type=Path, help="score the scanner against the labels merged with this second labelling")
    args = ap.parse_args(argv)
    project = args.project.resolve()
    try:
        repos = load_labels(args.labels)
        if args.union is not None:
            repos = union(repos, load_labels(args.union))
        if args.against is not None:
            per_repo, total = score_all(repos, findings_from_labels(repos, load_labels(args.against)))
            problems: list[str] = []
        else:
            python = args.python or default_python(project)
            context = not args.no_context
            per_repo, total, problems = evaluate(repos, args.mirror_root, project, python, args.tree, context)
    except EvalError as exc:
        print(f"scan_eval: {exc}", file=sys.stderr)
        return 2
    print(as_json(per_repo, total, problems) if args.json else markdown(per_repo, total, problems), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
