"""The scanner's settings from the scanned repository's ``pyproject.toml``, ``[tool.torchtpu-scan]``.

::

    [tool.torchtpu-scan]
    exclude = ["tests/*", "legacy/"]   # gitignore patterns, as --exclude
    select = ["TPU1", "TPU301"]        # rule codes or code prefixes to run (default: all)
    ignore = ["TPU8"]                  # codes or prefixes to leave out
    fail-on = "must-change"            # the least severity that makes the exit status 1, or "never"
    site-url = "https://handbook.example.com/"   # where finding links point

The file is the first ``pyproject.toml`` with that table, looking from the first scanned path up
to the root (as Ruff looks for its own), or the one ``--config`` names. Every problem (bad TOML, an
unknown key, a wrong type, a code that names no rule) is a ``ConfigError`` with ``path:line``.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import Problem

TABLE = "torchtpu-scan"
FAIL_ON = ("must-change", "review", "info", "never")
_KEYS = {"exclude": list, "select": list, "ignore": list, "fail-on": str, "site-url": str}
CODE = re.compile(r"^TPU[0-9]{0,3}$")
_AT_LINE = re.compile(r"\(at line (\d+), column \d+\)")
MAX_BYTES = 1_000_000


class ConfigError(Exception):
    def __init__(self, problems: list[Problem]):
        super().__init__(f"{len(problems)} problem(s)")
        self.problems = problems


@dataclass
class ScanConfig:
    path: str | None = None  # the file read, as shown; None when there is none
    exclude: list[str] = field(default_factory=list)
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    fail_on: str = "must-change"
    site_url: str | None = None


def find_config(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start`` that has a ``[tool.torchtpu-scan]`` table."""
    here = start.resolve() if start.exists() else start.absolute()
    if not here.is_dir():
        here = here.parent
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        try:
            if candidate.is_file() and f"[tool.{TABLE}]" in candidate.read_text(encoding="utf-8", errors="replace"):
                return candidate
        except OSError:
            continue
    return None


def read_config(path: Path, shown: str) -> ScanConfig:
    """The settings in ``path``; ConfigError with every problem."""
    text, data = _read_toml(path, shown)
    table = data.get("tool", {}).get(TABLE) if isinstance(data.get("tool"), dict) else None
    out = ScanConfig(path=shown)
    if table is None:
        return out
    problems: list[Problem] = []
    if not isinstance(table, dict):
        raise ConfigError([Problem(shown, _line_of(text, None), f"tool.{TABLE} is not a table")])
    for key, value in table.items():
        line = _line_of(text, key)
        want = _KEYS.get(key)
        if want is None:
            problems.append(
                Problem(shown, line, f"tool.{TABLE}: unknown key '{key}' (expected one of {', '.join(_KEYS)})")
            )
        elif not isinstance(value, want) or (want is list and not all(isinstance(v, str) for v in value)):
            kind = "a list of strings" if want is list else "a string"
            problems.append(Problem(shown, line, f"tool.{TABLE}.{key}: expected {kind}"))
        elif key in ("select", "ignore"):
            bad = [v for v in value if not CODE.match(v)]
            if bad:
                problems.append(
                    Problem(
                        shown,
                        line,
                        f"tool.{TABLE}.{key}: '{bad[0]}' is not a rule code (expected TPU and up to 3 digits)",
                    )
                )
            setattr(out, key, list(value))
        elif key == "fail-on" and value not in FAIL_ON:
            problems.append(
                Problem(shown, line, f"tool.{TABLE}.fail-on: '{value}' (expected one of {', '.join(FAIL_ON)})")
            )
        elif key == "fail-on":
            out.fail_on = value
        elif key == "site-url" and not value.startswith("https://"):
            problems.append(Problem(shown, line, f"tool.{TABLE}.site-url: '{value}' (expected an https:// URL)"))
        elif key == "site-url":
            out.site_url = value
        elif key == "exclude":
            out.exclude = list(value)
    if problems:
        raise ConfigError(problems)
    return out


def _read_toml(path: Path, shown: str) -> tuple[str, dict[str, Any]]:
    """The text of ``path`` and its TOML; ConfigError when it can't be read or parsed."""
    try:
        raw = path.read_bytes()[: MAX_BYTES + 1]
    except OSError as exc:
        raise ConfigError([Problem(shown, 1, f"can't be read: {exc.strerror or exc}")]) from None
    if len(raw) > MAX_BYTES:
        raise ConfigError([Problem(shown, 1, "is larger than 1 MB (expected a pyproject.toml)")])
    try:
        text = raw.decode("utf-8-sig")
        data = tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise ConfigError([Problem(shown, raw[: exc.start].count(b"\n") + 1, "is not UTF-8")]) from None
    except tomllib.TOMLDecodeError as exc:
        found = _AT_LINE.search(str(exc))
        message = _AT_LINE.sub("", str(exc)).strip()
        line = int(found.group(1)) if found else max(1, len(raw.decode("utf-8", "replace").splitlines()))
        raise ConfigError([Problem(shown, line, f"is not valid TOML: {message}")]) from None
    return text, data


def _line_of(text: str, key: str | None) -> int:
    """The line of ``key`` inside the ``[tool.torchtpu-scan]`` table (the table's line when not found)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == f"[tool.{TABLE}]"), None)
    if start is None:
        return 1
    if key is not None:
        pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
        for i in range(start + 1, len(lines)):
            if lines[i].lstrip().startswith("["):
                break
            if pattern.match(lines[i]):
                return i + 1
    return start + 1


def selected(code: str, select: list[str], ignore: list[str]) -> bool:
    """Whether a rule code runs: it matches a ``select`` prefix (or there is none) and no ``ignore`` one."""
    if select and not any(code.startswith(s) for s in select):
        return False
    return not any(code.startswith(i) for i in ignore)
