"""The files of a project folder, checked before any of them is read.

Everything under ``docs/`` is published (MkDocs copies what is not a page verbatim), pages
include files from ``snippets/``, and ``mkdocs.yml`` is read by the checks. A contributor could
put there a symlink to a file outside the project (which the build would then publish), a FIFO
or a device (which would block or never end a read), a folder named like a page, a Markdown file
MkDocs renders but the checks don't see, or a raw HTML file that would reach the site unchecked.
``scan_project`` finds each with ``path:1`` and returns the pages that are safe to read.

The scan reads only directory entries and ``stat`` results, never file contents; it walks with an
explicit stack, follows a symlinked folder (as MkDocs does) only when it stays inside the project
and does not lead back into a folder it is in, and stops after ``MAX_ENTRIES`` entries.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .errors import Problem, escape_text
from .yamlload import FORBIDDEN

MAX_FILE_BYTES = 5_000_000  # the largest file under docs/ is about 70 KB
MAX_ENTRIES = 50_000  # files and folders under docs/ and snippets/ together; the handbook has under 100

PAGE = ".md"
# Markdown that MkDocs would render as a page while the checks read only .md files, or that a
# reader would take for a page (.mdx is copied as is; x.md.bak, x.md~ are editor leftovers).
OTHER_MARKDOWN = (".markdown", ".mdown", ".mkdn", ".mkd", ".mdwn", ".mdtxt", ".mdtext", ".mdx", ".rmd", ".qmd")
# Copied into the site byte for byte: they could carry script or load from another origin.
RAW_HTML = (".html", ".htm", ".xhtml", ".xht", ".shtml")


@dataclass
class Scan:
    """What the scan found: the pages safe to read, sorted, and every problem."""

    pages: list[Path] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def scan_project(root: Path) -> Scan:
    """Check ``docs/`` (pages and every other file), ``snippets/`` and ``mkdocs.yml``."""
    scan = Scan()
    real_root = _real(root)
    if real_root is None:  # pragma: no cover - the root itself is not reachable
        scan.problems.append(Problem(root.as_posix(), 1, "project folder cannot be read (expected a folder)"))
        return scan
    budget = [MAX_ENTRIES]
    for top, is_docs in (("docs", True), ("snippets", False)):
        if (root / top).is_dir() or (root / top).is_symlink():
            _walk(root, real_root, top, is_docs, scan, budget)
    config = root / "mkdocs.yml"
    if config.exists() or config.is_symlink():
        problem = check_entry(config, "mkdocs.yml", real_root, want_dir=False)
        if problem:
            scan.problems.append(problem)
    scan.pages.sort()
    scan.problems.sort()
    return scan


def check_files(root: Path) -> list[Problem]:
    """Only the problems of ``scan_project``."""
    return scan_project(root).problems


def leaves_project(path: Path, shown: str, real_root: Path) -> Problem | None:
    """A Problem when ``path`` is a symlink (or sits under one) that resolves outside ``real_root``."""
    target = _real(path)
    if target is None:
        return Problem(shown, 1, "symlink loop (expected a link that ends at a file inside the project)")
    if not _inside(target, real_root):
        return Problem(
            shown,
            1,
            f"symlink leaves the project (points to '{_link(path)}'; expected a file inside the project folder)",
        )
    return None


def check_entry(path: Path, shown: str, real_root: Path, want_dir: bool | None = None) -> Problem | None:
    """The first thing wrong with one file or folder: leaving the project, its kind, its size."""
    if path.is_symlink():
        problem = leaves_project(path, shown, real_root)
        if problem:
            return problem
    try:
        info = path.stat()
    except FileNotFoundError:
        return Problem(shown, 1, f"broken symlink (points to '{_link(path)}'; expected an existing file)")
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return Problem(shown, 1, "symlink loop (expected a link that ends at a file inside the project)")
        return Problem(shown, 1, f"cannot be read: {exc.strerror or exc} (expected a readable file)")
    if stat.S_ISDIR(info.st_mode):
        if want_dir is False:
            return Problem(shown, 1, "is a folder (expected a file)")
        if path.is_symlink():
            target, home = _real(path), _real(path.parent)
            if target is not None and home is not None and _inside(home, target):
                return Problem(
                    shown,
                    1,
                    f"symlink loop: points to '{_link(path)}', a folder that contains it "
                    "(expected a folder outside this one, inside the project)",
                )
        return None
    if not stat.S_ISREG(info.st_mode):
        return Problem(shown, 1, "not a regular file (a FIFO, socket or device; expected a file)")
    if info.st_size > MAX_FILE_BYTES:
        return Problem(
            shown,
            1,
            f"file is {info.st_size / 1e6:.1f} MB (expected at most {MAX_FILE_BYTES / 1e6:g} MB)",
        )
    return None


def _walk(root: Path, real_root: Path, top: str, is_docs: bool, scan: Scan, budget: list[int]) -> None:
    problem = check_entry(root / top, top, real_root, want_dir=True)
    if problem:
        scan.problems.append(problem)
        return
    stack: list[tuple[str, dict[Path, str]]] = [(top, {})]  # (folder, the real folders it is in)
    while stack:
        rel, chain = stack.pop()
        real = _real(root / rel)
        if real is None:  # pragma: no cover - check_entry reported it already
            continue
        if real in chain:  # symlinked folders that lead into each other: MkDocs would walk them 40 deep
            scan.problems.append(
                Problem(
                    rel,
                    1,
                    f"symlink loop: leads back into '{chain[real]}' "
                    "(expected a folder outside this one, inside the project)",
                )
            )
            continue
        chain = {**chain, real: rel}
        try:
            with os.scandir(root / rel) as entries:
                names = sorted(entry.name for entry in entries)
        except OSError as exc:
            scan.problems.append(Problem(rel, 1, f"folder cannot be read: {exc.strerror or exc} (expected a folder)"))
            continue
        for name in names:
            budget[0] -= 1
            if budget[0] < 0:
                scan.problems.append(
                    Problem(top, 1, f"more than {MAX_ENTRIES:,} files and folders (expected fewer; remove some)")
                )
                return
            _entry(root, real_root, rel, name, is_docs, scan, stack, chain)


def _entry(
    root: Path,
    real_root: Path,
    rel: str,
    name: str,
    is_docs: bool,
    scan: Scan,
    stack: list[tuple[str, dict[Path, str]]],
    chain: dict[Path, str],
) -> None:
    """One entry of a folder: a problem, a folder to walk next, a page, or another file."""
    shown = f"{rel}/{name}"
    path = root / shown
    if "\n" in name or FORBIDDEN.search(name):  # a line break in a name would forge a report line
        scan.problems.append(
            Problem(
                escape_text(shown),
                1,
                "name has a control or invisible character (expected a plain file name)",
            )
        )
        return
    hidden = any(part.startswith(".") for part in shown.split("/"))
    if hidden and path.is_symlink() and not path.exists():
        return  # an editor's lock file (.#page.md); MkDocs leaves hidden files out of the site
    problem = check_entry(path, shown, real_root)
    if problem:
        scan.problems.append(problem)
        return
    if path.is_dir():
        if is_docs and name.lower().endswith(PAGE) and not hidden:
            scan.problems.append(
                Problem(shown, 1, f"folder named like a page '{name}' (expected a .md name for files only)")
            )
        stack.append((shown, chain))
    elif is_docs and not hidden:
        problem = _page_name(name, shown)
        if problem:
            scan.problems.append(problem)
        elif name.endswith(PAGE):
            scan.pages.append(path)


def _page_name(name: str, shown: str) -> Problem | None:
    """A file under docs/ whose name makes it look like a page it isn't, or raw HTML."""
    lower = name.lower()
    if lower.endswith(PAGE):
        if not name.endswith(PAGE):
            return Problem(shown, 1, f"page name ends in '{name[-3:]}' (expected lower-case '.md')")
        return None
    if lower.endswith(OTHER_MARKDOWN):
        ext = "." + lower.rsplit(".", 1)[1]
        return Problem(
            shown,
            1,
            f"Markdown file with the extension '{ext}' is not checked like a page (expected a '.md' page, "
            "listed in the nav)",
        )
    if ".md." in lower or lower.endswith(".md~"):
        return Problem(
            shown,
            1,
            "leftover copy of a page (would be published as is; expected it removed, or kept outside docs/)",
        )
    if lower.endswith(RAW_HTML):
        return Problem(
            shown,
            1,
            "raw HTML file would be copied into the site unchecked and could carry script (expected a Markdown page)",
        )
    return None


def _real(path: Path) -> Path | None:
    """``path`` with every symlink resolved, or None for a loop."""
    try:
        return Path(os.path.realpath(path, strict=False))
    except (OSError, RuntimeError, ValueError):
        return None


def _link(path: Path) -> str:
    """What a symlink says it points to (or, for a path under a symlinked folder, where it ends)."""
    try:
        return os.readlink(path)
    except OSError:
        real = _real(path)
        return real.as_posix() if real else path.as_posix()


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
