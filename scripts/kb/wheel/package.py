"""The pinned torch-tpu release: the pin, the cached wheel, its index, the committed inventory.

The pin lives in one place, ``torch-tpu.pin`` at the project root. The wheel is fetched once with
``pip download --no-deps`` into ``.cache/wheels/`` (ignored by git) and read offline afterwards.
``docs/data/package.json`` is the inventory the pages render from (what the package has that the
handbook doesn't document yet); ``kb check-wheel`` fails when it no longer matches the wheel.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..core.errors import Problem
from .messages import Message, user_facing
from .wheel import ENV_TOKEN, ClassInfo, ModuleInfo, WheelError, WheelIndex, read_wheel

PIN_FILE = "torch-tpu.pin"
CACHE = Path(".cache") / "wheels"
INVENTORY = Path("docs") / "data" / "package.json"
INDEX_FORMAT = 4


class PackageError(Exception):
    """A problem with the pin, the download or the wheel, as a Problem."""

    def __init__(self, problem: Problem):
        self.problem = problem
        super().__init__(str(problem))


def read_pin(root: Path) -> tuple[str, str]:
    """(project, version) from ``torch-tpu.pin``: one line ``name==version``."""
    path = root / PIN_FILE
    try:
        lines = [ln.strip() for ln in path.read_text("utf-8").splitlines() if ln.strip() and not ln.startswith("#")]
    except (OSError, UnicodeDecodeError) as exc:
        raise PackageError(
            Problem(PIN_FILE, 1, f"can't read the pin ({exc.__class__.__name__}; expected 'torch-tpu==X.Y.Z')")
        ) from None
    m = re.fullmatch(r"([A-Za-z0-9_.-]+)==([0-9][0-9A-Za-z.+-]*)", lines[0]) if len(lines) == 1 else None
    if m is None:
        raise PackageError(Problem(PIN_FILE, 1, "expected exactly one line 'torch-tpu==X.Y.Z'"))
    return m.group(1), m.group(2)


def pin_text(root: Path) -> str:
    project, version = read_pin(root)
    return f"{project}=={version}"


def cached_wheel(root: Path) -> Path | None:
    """The pinned wheel in the cache, or None."""
    project, version = read_pin(root)
    stem = project.replace("-", "_")
    found = sorted((root / CACHE).glob(f"{stem}-{version}-*.whl"))
    return found[0] if found else None


def pip_download(dest: Path, pin: str, platform: str, timeout: float = 300) -> str:
    """``pip download --no-deps`` one pin's CPython 3.11 wheel into ``dest``; pip's last line of
    complaint ("" when it exited 0). pip writes into a folder of its own inside ``dest``, and each
    wheel is moved into ``dest`` whole: a reader (another build, another test process) never sees a
    wheel half written, and an interrupted download leaves none."""
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest, prefix=".download.") as tmp:
        cmd = [
            sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
            "--platform", platform, "--python-version", "3.11", "--implementation", "cp",
            "--disable-pip-version-check", "-q", "-d", tmp, pin,
        ]  # fmt: skip
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"({exc})"
        for wheel in Path(tmp).glob("*.whl") if done.returncode == 0 else ():
            os.replace(wheel, dest / wheel.name)
    return "" if done.returncode == 0 else (done.stderr.strip().splitlines() or ["no output"])[-1]


def fetch_wheel(root: Path, timeout: float = 300) -> Path:
    """Download the pinned wheel (no dependencies) into the cache; return its path."""
    pin = pin_text(root)
    tail = pip_download(root / CACHE, pin, "manylinux_2_31_x86_64", timeout)
    wheel = cached_wheel(root)
    if tail or wheel is None:
        raise PackageError(
            Problem(
                PIN_FILE,
                1,
                f"pip download {pin} failed: {tail or 'no wheel'} (expected the package index to be reachable)",
            )
        )
    return wheel


def load_index(wheel: Path, cache_dir: Path | None = None) -> WheelIndex:
    """Read a wheel, reusing a JSON index cached beside it (keyed by the wheel's size and mtime, so a
    build does not re-read 100 MB to hash it)."""
    try:
        stat = wheel.stat()
        digest = f"{stat.st_size}-{stat.st_mtime_ns}"
    except OSError as exc:
        raise PackageError(Problem(str(wheel), 1, f"can't read the wheel ({exc.strerror})")) from None
    cached = (cache_dir or wheel.parent) / f"{wheel.name}.{digest}.index.json"
    if cached.is_file():
        try:
            return _from_json(json.loads(cached.read_text("utf-8")))
        except (ValueError, KeyError, TypeError):
            pass  # a stale or damaged cache is rebuilt below
    try:
        index = read_wheel(wheel)
    except WheelError as exc:
        raise PackageError(Problem(str(wheel), 1, str(exc))) from None
    partial = cached.with_name(f".{cached.name}.{os.getpid()}")
    try:  # written beside, then moved in: a build running beside this one never reads half of it
        partial.write_text(json.dumps(_to_json(index)), "utf-8")
        os.replace(partial, cached)
    except OSError:  # a read-only or full folder only costs speed
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
    return index


def _to_json(index: WheelIndex) -> dict[str, Any]:
    data = dataclasses.asdict(index)
    data["format"] = INDEX_FORMAT
    text = json.dumps(data, default=lambda v: sorted(v) if isinstance(v, set) else str(v))
    plain: dict[str, Any] = json.loads(text)
    return plain


def _from_json(data: dict[str, Any]) -> WheelIndex:
    if data.pop("format", None) != INDEX_FORMAT:
        raise ValueError("old index format")
    data["modules"] = {k: ModuleInfo(**{**v, "names": set(v["names"])}) for k, v in data["modules"].items()}
    data["classes"] = {
        k: [ClassInfo(**{**c, "members": set(c["members"])}) for c in v] for k, v in data["classes"].items()
    }
    data["messages"] = [Message(**m) for m in data["messages"]]
    for key in ("files", "env", "env_read", "attrs", "backends", "strings"):
        data[key] = set(data[key])
    return WheelIndex(**data)


# ---- inventory: what the pages can render without the wheel ----


def inventory(index: WheelIndex) -> dict[str, Any]:
    """The package's user-facing names and messages: public API, env vars it reads, backends,
    requirements, and what it can print (messages.user_facing)."""
    env = {n for n in index.env | index.env_read if ENV_TOKEN.fullmatch(n) and index.has_env(n)}
    return {
        "package": index.project,
        "version": index.version,
        "requires_python": index.requires_python,
        "requires": dict(sorted(index.requires.items())),
        "backends": sorted(index.backends),
        "api": sorted(index.public),
        "env": sorted(env),
        "messages": [
            {"text": m.text, "kind": m.kind, "where": m.where} for m in user_facing(index.messages, index.native_texts)
        ],
    }


def inventory_text(index: WheelIndex) -> str:
    return json.dumps(inventory(index), indent=1) + "\n"


# ---- release upgrades ----


def diff(old: WheelIndex, new: WheelIndex) -> list[str]:
    """Lines ``+ kind name`` / ``- kind name`` between two releases, for a maintainer to act on."""
    a, b = inventory(old), inventory(new)
    lines = []
    for key in ("api", "env", "backends"):
        for name in sorted(set(b[key]) - set(a[key])):
            lines.append(f"+ {key} {name}")
        for name in sorted(set(a[key]) - set(b[key])):
            lines.append(f"- {key} {name}")
    said, says = ({m["text"] for m in inv["messages"]} for inv in (a, b))
    lines += [f"+ message {text}" for text in sorted(says - said)]
    lines += [f"- message {text}" for text in sorted(said - says)]
    for name in sorted(set(new.modules) - set(old.modules)):
        lines.append(f"+ module {name}")
    for name in sorted(set(old.modules) - set(new.modules)):
        lines.append(f"- module {name}")
    reqs = {"python": (old.requires_python, new.requires_python)}
    for dist in sorted(set(old.requires) | set(new.requires)):
        reqs[dist] = (old.requires.get(dist, ""), new.requires.get(dist, ""))
    for dist, (was, now) in reqs.items():
        if was != now:
            lines.append(f"~ requires {dist}: {was or '(none)'} -> {now or '(none)'}")
    return lines
