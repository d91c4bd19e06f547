"""What the pinned package has that the handbook does not document yet, from the committed inventory.

``docs/data/package.json`` is written by ``kb check-wheel --write-inventory`` and checked against the
wheel by ``kb check-wheel``, so pages can show the gap without the wheel at hand.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

from ..core.errors import Problem
from ..core.load import KB
from ..core.schema import EnvVar, ErrorEntry, InternalMessage, Names
from .messages import covers
from .wheel import ENV_TOKEN

API_TOKEN = re.compile(r"(?<![\w.])(torch\.tpu(?:\.[A-Za-z_]\w*)*|torch_tpu(?:\.[A-Za-z_]\w*)+)")
INVENTORY_FILE = "package.json"


class InventoryError(Exception):
    """The inventory is missing or not the expected shape; the message says which."""


def read_inventory(data_dir: Path) -> dict[str, Any]:
    path = data_dir / INVENTORY_FILE
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise InventoryError(
            f"no {INVENTORY_FILE} in docs/data (run 'python -m kb check-wheel --write-inventory')"
        ) from None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise InventoryError(f"docs/data/{INVENTORY_FILE} is not readable JSON ({exc.__class__.__name__})") from None
    if not isinstance(data, dict) or not all(isinstance(data.get(k), list) for k in ("api", "env")):
        raise InventoryError(
            f"docs/data/{INVENTORY_FILE} has no 'api' and 'env' lists (expected check-wheel's inventory)"
        )
    for key, pattern in (("api", API_TOKEN), ("env", ENV_TOKEN)):
        for name in data[key]:
            if not isinstance(name, str) or not pattern.fullmatch(name):
                raise InventoryError(f"docs/data/{INVENTORY_FILE}: {key} entry {name!r} is not a package name")
    for i, msg in enumerate(data.get("messages", [])):
        if not (isinstance(msg, dict) and all(isinstance(msg.get(k), str) for k in ("text", "kind", "where"))):
            raise InventoryError(
                f"docs/data/{INVENTORY_FILE}: messages[{i}] is not a message (expected text, kind and where strings)"
            )
    return data


def documented(kb: KB) -> set[str]:
    """Every package name a KB record states: its name lists, current names and prose tokens."""
    names: set[str] = set()
    for records in kb.tables.values():
        for rec in records:
            model = rec.model
            if isinstance(model, Names):
                names |= set(model.api) | set(model.env) | set(model.backend)
                if model.current:
                    names.add(model.current)
            if isinstance(model, EnvVar):
                names.add(model.name)
            for text in _strings(model.model_dump(exclude={"sources"})):
                names |= set(API_TOKEN.findall(text)) | set(ENV_TOKEN.findall(text))
    # a documented member documents its parents: torch.tpu.EagerMode.DEFER_AND_FUSE -> torch.tpu.EagerMode
    for name in list(names):
        parts = name.split(".")
        names |= {".".join(parts[:cut]) for cut in range(2, len(parts))}
    return names


def undocumented(kb: KB, inventory: dict[str, Any], kind: str) -> list[str]:
    """The inventory's names of ``kind`` (api or env) that no record states."""
    known = documented(kb)
    return [name for name in inventory[kind] if name not in known]


def message_problems(kb: KB, inventory: dict[str, Any]) -> list[Problem]:
    """Every message the wheel can print is an error entry or an internal message with its reason,
    and every internal message is one the wheel prints (so the list can't go stale)."""
    internal = kb.rows("internal_messages", InternalMessage)
    listed = {rec.model.message for rec in internal}
    texts = {m["text"] for m in inventory.get("messages", [])}
    problems = [
        Problem(
            "docs/data/package.json",
            1,
            f"the wheel's message '{m['text']}' ({m['where']}) is neither an entry of docs/data/errors.yml nor in "
            "docs/data/internal_messages.yml (expected an entry with cause and fix, "
            "or an internal one with its reason)",
        )
        for m in undocumented_messages(kb, inventory)
        if m["text"] not in listed
    ]
    problems += [
        Problem(
            rec.path,
            rec.line_of("message"),
            f"{rec.where('message')}: not a message of the wheel's inventory "
            "(expected the text exactly as docs/data/package.json spells it)",
        )  # fmt: skip
        for rec in internal
        if rec.model.message not in texts
    ]
    return problems


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def undocumented_messages(kb: KB, inventory: dict[str, Any]) -> list[dict[str, str]]:
    """The inventory's messages (what the package can print) that no ``errors`` entry covers."""
    if not isinstance(inventory.get("messages"), list):
        raise InventoryError(
            f"docs/data/{INVENTORY_FILE} has no 'messages' list (run 'python -m kb check-wheel --write-inventory')"
        )
    entries = [rec.model.message for rec in kb.rows("errors", ErrorEntry)]
    return [m for m in inventory["messages"] if not any(covers(e, m["text"]) for e in entries)]
