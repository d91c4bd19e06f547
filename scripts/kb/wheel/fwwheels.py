"""Hold framework records to the frameworks' own released wheels (``frameworks.pin``).

A source with ``wheel: NAME==VERSION`` is that release's wheel, read as a zip and never imported.
Every locator that cites it is ``FILE:LINE[-LINE] `token` ...`` (several joined by ``; ``): the file
must be in the wheel, the lines in the file, and each backticked token on those lines, so a record
fails when the framework's code moves or changes under it. A record whose ``checked_against`` is a
framework's pin cites that framework's wheel.
"""

from __future__ import annotations

import re
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import Problem
from ..core.load import KB, Record
from ..core.schema import Checked, Model, Source, Sourced
from .package import PackageError, pip_download

PIN_FILE = "frameworks.pin"
CACHE = Path(".cache") / "wheels"
PIN = re.compile(r"([A-Za-z0-9_.-]+)==([0-9][0-9A-Za-z.+-]*)")
PART = re.compile(r"(?P<file>[\w./-]+\.\w+):(?P<start>\d+)(?:-(?P<end>\d+))?(?P<tokens>(?:\s+`[^`\n]+`)+)")
TOKEN = re.compile(r"`([^`\n]+)`")
LOCATOR_FORM = "FILE:LINE[-LINE] `token` ... (several joined by '; '), each token on those lines"


def read_pins(root: Path) -> dict[str, int]:
    """Each ``NAME==VERSION`` line of ``frameworks.pin`` (names lowercased), with its line number."""
    path = root / PIN_FILE
    if not path.is_file():
        return {}
    try:
        lines = path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise PackageError(
            Problem(PIN_FILE, 1, f"can't read it ({exc.__class__.__name__}; expected NAME==VERSION lines)")
        ) from None
    pins: dict[str, int] = {}
    for n, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = PIN.fullmatch(line)
        if m is None:
            raise PackageError(Problem(PIN_FILE, n, f"'{line}' is not a pin (expected NAME==VERSION)"))
        pins[f"{_norm(m.group(1))}=={m.group(2)}"] = n
    return pins


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def cached(root: Path, pin: str) -> Path | None:
    """The cached wheel of one pin, or None."""
    name, version = pin.split("==")
    stem = name.replace("-", "_")
    found = sorted(p for p in (root / CACHE).glob("*.whl") if p.name.lower().startswith(f"{stem}-{version}-"))
    return found[0] if found else None


def fetch(root: Path, pins: list[str], timeout: float = 600) -> list[Problem]:
    """Download each pin's wheel that is not cached (no dependencies, CPython 3.11 on x86_64 Linux)."""
    problems = []
    for pin in pins:
        if cached(root, pin) is not None:
            continue
        print(f"downloading {pin} (no dependencies) into .cache/wheels/ ...", file=sys.stderr)
        tail = pip_download(root / CACHE, pin, "manylinux2014_x86_64", timeout)
        if cached(root, pin) is None:
            problems.append(
                Problem(PIN_FILE, 1, f"pip download {pin} failed: {tail or 'no wheel'} (expected the index reachable)")
            )
    return problems


@dataclass
class Wheels:
    """The framework wheels found in the cache, read lazily: one zip open and one file read each."""

    root: Path
    pins: dict[str, int]
    _zips: dict[str, zipfile.ZipFile | None] = field(default_factory=dict)
    _files: dict[tuple[str, str], list[str] | None] = field(default_factory=dict)

    def lines(self, pin: str, name: str) -> list[str] | None:
        """The lines of one file of a pin's wheel; None when the wheel or the file is missing."""
        key = (pin, name)
        if key not in self._files:
            zf = self._zip(pin)
            try:
                data = zf.read(name) if zf is not None else None
            except KeyError:
                data = None
            self._files[key] = data.decode("utf-8", "replace").splitlines() if data is not None else None
        return self._files[key]

    def _zip(self, pin: str) -> zipfile.ZipFile | None:
        if pin not in self._zips:
            path = cached(self.root, pin)
            try:
                self._zips[pin] = zipfile.ZipFile(path) if path else None
            except (OSError, zipfile.BadZipFile):
                self._zips[pin] = None
        return self._zips[pin]

    def close(self) -> None:
        for zf in self._zips.values():
            if zf is not None:
                zf.close()


def check(kb: KB, root: Path, notes: list[str]) -> list[Problem]:
    """Every framework pin, wheel source, locator and ``checked_against``, as Problems."""
    try:
        pins = read_pins(root)
    except PackageError as exc:
        return [exc.problem]
    sources = {r.id: r.narrow(Source) for r in kb.tables.get("sources", [])}
    wheels = Wheels(root, pins)
    missing = sorted(p for p in pins if cached(root, p) is None)
    problems: list[Problem] = []
    for src in sources.values():
        pin = src.model.wheel
        if pin is not None and _norm_pin(pin) not in pins:
            problems.append(_at(src, "wheel", f"'{pin}' is not a line of {PIN_FILE} (expected one of: {_list(pins)})"))
        if pin is not None and src.model.checked_against != pin:
            problems.append(_at(src, "checked_against", f"'{src.model.checked_against}' is not its wheel {pin}"))
    for records in kb.tables.values():
        for rec in records:
            problems += _record(rec, sources, wheels, pins, missing)
    wheels.close()
    if missing:
        notes.append(f"framework wheel check skipped for {', '.join(missing)}: not in .cache/wheels/ "
                     "(run './dev check-wheel' once to download them; the build never downloads)")  # fmt: skip
    elif pins:
        notes.append(f"framework check: held to {', '.join(sorted(pins))}")
    return problems


def framework_pins(root: Path) -> set[str]:
    """The pins a record's ``checked_against`` may name besides torch-tpu's (none when unreadable)."""
    try:
        return set(read_pins(root))
    except PackageError:
        return set()


def _record(
    rec: Record[Model], sources: dict[str, Record[Source]], wheels: Wheels, pins: dict[str, int], missing: list[str]
) -> list[Problem]:
    model = rec.model
    if not isinstance(model, Sourced):
        return []
    problems = []
    cited: set[str] = set()
    for i, ref in enumerate(model.sources):
        src = sources.get(ref.id)
        pin = _norm_pin(src.model.wheel) if src is not None and src.model.wheel else None
        if pin is None:
            continue
        cited.add(pin)
        where = ("sources", i, "locator")
        for message in _locator(ref.locator, pin, wheels, pin in missing or pin not in pins):
            problems.append(Problem(rec.path, rec.line_of(*where), f"{rec.where(*where)}: {message}"))
    against = _norm_pin(model.checked_against) if isinstance(model, Checked) else ""
    if against in pins and against not in cited:
        problems.append(
            _at(
                rec,
                "checked_against",
                f"'{model.checked_against}' but no source is that wheel (expected a citation "
                f"of the source whose wheel: is {model.checked_against})",
            )  # fmt: skip
        )
    return problems


def _locator(locator: str, pin: str, wheels: Wheels, skip_read: bool) -> list[str]:
    """What is wrong with one wheel locator: its form, then (when the wheel is cached) its lines."""
    problems = []
    for part in locator.split("; "):
        m = PART.fullmatch(part.strip())
        if m is None:
            problems.append(f"'{part}' is not a wheel locator (expected {LOCATOR_FORM})")
            continue
        start, end = int(m["start"]), int(m["end"] or m["start"])
        if not 1 <= start <= end <= start + 40:
            problems.append(f"lines {start}-{end} are not a range of at most 40 lines (expected START <= END)")
            continue
        if skip_read:
            continue
        lines = wheels.lines(pin, m["file"])
        if lines is None:
            problems.append(f"{m['file']} is not in the {pin} wheel (expected a file the wheel has)")
        elif end > len(lines):
            problems.append(f"{m['file']} has {len(lines)} lines in {pin}, not {end} (expected a line that exists)")
        else:
            span = "\n".join(lines[start - 1 : end])
            for token in TOKEN.findall(m["tokens"]):
                if token not in span:
                    problems.append(f"`{token}` is not on {m['file']}:{start}-{end} in {pin} (expected it there)")
    return problems


def _norm_pin(pin: str) -> str:
    name, _, version = pin.partition("==")
    return f"{_norm(name)}=={version}"


def _list(pins: dict[str, int]) -> str:
    return ", ".join(sorted(pins)) or f"none: {PIN_FILE} is missing or empty"


def _at(rec: Record[Model], key: str, message: str) -> Problem:
    return Problem(rec.path, rec.line_of(key), f"{rec.where(key)}: {message}")
