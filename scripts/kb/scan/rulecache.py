"""The checked rules table, kept between scans in the project's ``.cache`` folder.

Reading the table validates every row with pydantic, whose import and checks cost about a tenth of a
second before any file is scanned. ``cached_rules`` keeps the compiled ``RuleSet`` (plain
dataclasses: kb.scan.scanrules) in one file, under a key: the SHA-256 of the Python version, of the
code that reads and compiles the table (kb/core and kb/scan/scanrules.py), of each rules file's
path and bytes, and of where the links point. A scan reads the file back only when its key is that
key; anything else (another key, a file cut short or corrupt, one that can't be read) is passed
over and the table is read and checked again. The file is written whole or not at all (a temporary
file renamed over it), and a folder that can't be written just means no cache. It is read with
``pickle``: the ``.cache`` folder is the project's own, as trusted as the code beside it.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from pathlib import Path

from .scanrules import RuleSet, SiteBase, link_base, load_rules

NAME = "scan-rules.pickle"
_MAGIC = b"kb-scan-rules 1 "  # then the key's hex digest and a newline, then the pickled RuleSet
_KB = Path(__file__).resolve().parents[1]


def code_files() -> list[Path]:
    """The code whose change changes what the table compiles to: kb/core (the schema, the loader,
    the YAML reader) and the compiler."""
    return [*sorted((_KB / "core").glob("*.py")), _KB / "scan" / "scanrules.py"]


def cache_key(files: list[Path], base: SiteBase) -> str:
    """The key a cache must carry to be used (OSError when a file can't be read)."""
    digest = hashlib.sha256(sys.version.encode())
    for path in [*code_files(), *files]:
        data = path.read_bytes()
        digest.update(f"\0{path}\0{len(data)}\0".encode())
        digest.update(data)
    digest.update(repr(base).encode())
    return digest.hexdigest()


def cached_rules(files: list[Path], root: Path, site_url: str | None, folder: Path) -> RuleSet:
    """``load_rules(files, root, site_url)``, kept in ``folder`` (made when missing): read from
    there when the key matches, else loaded (KBError on problems, never kept) and written."""
    try:
        key = cache_key(files, link_base(root, site_url))
    except OSError:  # a rules file that can't be read: load_rules reports it
        return load_rules(files, root, site_url)
    rules = read_cache(folder / NAME, key)
    if rules is None:
        rules = load_rules(files, root, site_url)
        write_cache(folder / NAME, key, rules)
    return rules


def read_cache(path: Path, key: str) -> RuleSet | None:
    """The RuleSet kept in ``path`` under ``key``; None when there is none, or another key, or the
    file is not one this module wrote whole."""
    header = _MAGIC + key.encode() + b"\n"
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not data.startswith(header):
        return None
    try:
        rules = pickle.loads(data[len(header) :])
    except Exception:  # a corrupt pickle raises whatever its bytes lead to: rebuilt, never trusted
        return None
    return rules if isinstance(rules, RuleSet) else None


def write_cache(path: Path, key: str, rules: RuleSet) -> bool:
    """Keep ``rules`` under ``key`` in ``path``, atomically; False when the folder can't be written."""
    data = _MAGIC + key.encode() + b"\n" + pickle.dumps(rules, protocol=pickle.HIGHEST_PROTOCOL)
    temp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temp, path)
        return True
    except OSError:
        if temp is not None:
            Path(temp).unlink(missing_ok=True)
        return False
