"""Only known scripts run: every same-origin script outside the pages is the theme's own or is
listed, with its sha256, in one allow-list (``docs/assets/vendor/ALLOWLIST``).

The allow-list has one line per script, in ``sha256sum``'s format (so ``sha256sum -c
docs/assets/vendor/ALLOWLIST`` checks it too): the hex digest, two spaces, and the file's path from
the project folder. Lines starting with ``#`` are comments. Adding a vendored library is one line:

    sha256sum docs/assets/vendor/NAME/FILE.js >> docs/assets/vendor/ALLOWLIST

What is checked, each problem at its file and line:
- every line of the list: its form, that the file exists, and that its sha256 is the one listed;
- every ``.js`` / ``.mjs`` file under ``docs/`` and ``overrides/`` is listed (a file there is copied
  into the site, where any page's script could load it);
- every script the config adds (``extra_javascript``, ``extra.polyfills``) in mkdocs.yml and
  mkdocs.offline.yml is a listed file (a URL of another origin is refused outright);
- every ``<script`` in an override template loads a listed file or one of the theme's own (a file
  of Material's templates folder); an inline script or a computed path is refused.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.config import ConfigFile, SiteConfig
from ..core.errors import Problem, escape_text
from ..core.yamlload import Located, YAMLProblem, read_text

ALLOWLIST = "docs/assets/vendor/ALLOWLIST"
SCRIPT_SUFFIXES = (".js", ".mjs")
_LINE = re.compile(r"([0-9a-f]{64})  (\S+)")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:|^//", re.I)
_SCRIPT_TAG = re.compile(r"<script\b([^>]*)>", re.I)
_SRC = re.compile(r"""\bsrc\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)
# A path written as a Jinja string through the url filter: {{ 'assets/x.js' | url }}
_TEMPLATE_PATH = re.compile(r"""^\{\{\s*(?:base_url\s*~\s*)?["']/?([^"'{}]+)["']\s*(?:\|\s*url\s*)?\}\}$""")


@dataclass(frozen=True)
class Entry:
    """One listed script: its project-relative path, expected sha256, and the list's line."""

    path: str
    sha256: str
    line: int


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_allowlist(root: Path) -> tuple[dict[str, Entry], list[Problem]]:
    """The listed scripts by path, and the problems of the list itself (form, missing, changed)."""
    path = root / ALLOWLIST
    if not path.is_file():
        return {}, []  # nothing listed: every script found below is reported as unlisted
    try:
        text = read_text(path, ALLOWLIST)
    except YAMLProblem as exc:
        return {}, [exc.problem]
    entries: dict[str, Entry] = {}
    problems: list[Problem] = []
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip() or line.startswith("#"):
            continue
        m = _LINE.fullmatch(line)
        if not m:
            problems.append(
                Problem(ALLOWLIST, n, f"{line!r} is not a script line (expected '<sha256 in hex>  <path>')")
            )
            continue
        entry = Entry(m.group(2), m.group(1), n)
        if entry.path in entries:
            problems.append(
                Problem(ALLOWLIST, n, f"'{entry.path}' is listed twice (first on line {entries[entry.path].line})")
            )
            continue
        entries[entry.path] = entry
        problems += _check_entry(root, entry)
    return entries, problems


def _check_entry(root: Path, entry: Entry) -> list[Problem]:
    file = root / entry.path
    inside = file.resolve().is_relative_to(root.resolve()) and ".." not in entry.path.split("/")
    if not inside or not file.is_file():
        return [
            Problem(ALLOWLIST, entry.line, f"'{entry.path}' names no file in the project (expected a path to a script)")
        ]
    actual = sha256_of(file)
    if actual != entry.sha256:
        return [
            Problem(
                entry.path,
                1,
                f"script changed: its sha256 is {actual} (expected {entry.sha256}, as {ALLOWLIST}:{entry.line} "
                "lists it; check the new file, then update that line)",
            )
        ]
    return []


def _unlisted(root: Path, rel: str, where: str, line: int, listed: dict[str, Entry]) -> list[Problem]:
    """A problem when the script at project path ``rel`` is not listed (reported at ``where:line``)."""
    if rel in listed:
        return []
    file = root / rel
    digest = sha256_of(file) if file.is_file() else None
    if digest is None:
        return [Problem(where, line, f"script '{rel}' names no file (expected a script listed in {ALLOWLIST})")]
    return [
        Problem(
            where,
            line,
            f"script '{rel}' is not in {ALLOWLIST} (expected the line '{digest}  {rel}' there, "
            "once you have checked the file: only listed scripts run)",
        )
    ]


def check_files(root: Path, listed: dict[str, Entry]) -> list[Problem]:
    """Every script file under docs/ and overrides/ is listed."""
    problems: list[Problem] = []
    for folder in ("docs", "overrides"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix.lower() in SCRIPT_SUFFIXES and not path.is_dir():
                rel = path.relative_to(root).as_posix()
                problems += _unlisted(root, rel, escape_text(rel), 1, listed)
    return problems


def config_scripts(config: Located) -> list[tuple[str, int]]:
    """The scripts a config adds, with their lines: extra_javascript (a path or {path: ...}) and
    extra.polyfills."""
    data: dict[str, Any] = config.data if isinstance(config.data, dict) else {}
    extra: dict[str, Any] = data["extra"] if isinstance(data.get("extra"), dict) else {}
    found: list[tuple[str, int]] = []
    for key_path, items in (
        (("extra_javascript",), data.get("extra_javascript")),
        (("extra", "polyfills"), extra.get("polyfills")),
    ):
        for i, item in enumerate(items if isinstance(items, list) else []):
            value = item.get("path") if isinstance(item, dict) else item
            found.append((str(value), config.line((*key_path, i))))
    return found


def check_config(root: Path, file: ConfigFile, listed: dict[str, Entry]) -> list[Problem]:
    """The scripts one configuration file adds (nothing when it is absent or unreadable:
    kb/core/config.py reports that)."""
    config, name = file.located, file.name
    if config is None:
        return []
    problems: list[Problem] = []
    for value, line in config_scripts(config):
        if _SCHEME.match(value) or value.startswith("/"):
            problems.append(
                Problem(name, line, f"script {value!r} is not a file of the site (expected a path under docs/)")
            )
            continue
        rel = "docs/" + value.split("?")[0].split("#")[0]
        if not (root / rel).is_file() and (root / "overrides" / value).is_file():
            rel = "overrides/" + value
        problems += _unlisted(root, rel, name, line, listed)
    return problems


def check_overrides(root: Path, listed: dict[str, Entry], theme_dir: Path | None) -> list[Problem]:
    """Every <script> of an override template loads a listed file or one of the theme's own."""
    problems: list[Problem] = []
    for path in sorted((root / "overrides").rglob("*.html")):
        shown = path.relative_to(root).as_posix()
        try:
            text = read_text(path, shown)
        except YAMLProblem as exc:
            problems.append(exc.problem)
            continue
        for m in _SCRIPT_TAG.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            problems += _override_script(root, m.group(1), shown, line, listed, theme_dir)
    return problems


def _override_script(
    root: Path, attrs: str, shown: str, line: int, listed: dict[str, Entry], theme_dir: Path | None
) -> list[Problem]:
    src = _SRC.search(attrs)
    value = next((g for g in src.groups() if g is not None), "") if src else ""
    m = _TEMPLATE_PATH.match(value.strip()) or re.fullmatch(r"([^{}:]+)", value.strip())
    if not m:
        what = "an inline script" if not src else f"a script from {value!r}"
        return [
            Problem(
                shown, line, f"{escape_text(what)} (expected src naming a script in {ALLOWLIST} or the theme's own)"
            )
        ]
    rel = m.group(1).lstrip("/")
    if theme_dir is not None and (theme_dir / rel).is_file() and not (root / "overrides" / rel).exists():
        return []  # the theme's own script
    rel = "overrides/" + rel if (root / "overrides" / rel).is_file() else "docs/" + rel
    return _unlisted(root, rel, shown, line, listed)


def theme_templates() -> Path | None:
    """Material's templates folder (the theme's own scripts), or None when it isn't installed."""
    spec = importlib.util.find_spec("material")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "templates"


def check_scripts(config: SiteConfig) -> list[Problem]:
    """All of the above for the project of ``config``."""
    root = config.root
    listed, problems = read_allowlist(root)
    problems += check_files(root, listed)
    for file in config.files:
        problems += check_config(root, file, listed)
    problems += check_overrides(root, listed, theme_templates())
    return problems
