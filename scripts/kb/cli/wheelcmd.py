"""``python -m kb check-wheel``: fetch (once) and read the pinned wheel, then check the whole handbook."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..core.errors import Problem, finish
from ..wheel import fwwheels
from ..wheel.coverage import InventoryError, read_inventory
from ..wheel.package import (
    INVENTORY,
    PackageError,
    cached_wheel,
    diff,
    fetch_wheel,
    inventory,
    inventory_text,
    load_index,
    read_pin,
)
from ..wheel.wheel import WheelIndex


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wheel", type=Path, help="a local wheel file (default: the pinned one, downloaded once into .cache/wheels/)"
    )
    parser.add_argument(
        "--against", type=Path, metavar="OLD.whl", help="list the names added and removed since an older wheel"
    )
    parser.add_argument("--offline", action="store_true", help="never download: fail when the wheel is not cached")
    parser.add_argument("--write-inventory", action="store_true", help="rewrite docs/data/package.json from the wheel")


class _Stop(Exception):
    """A usage problem: print it and exit 2."""


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    try:
        project_name, version = read_pin(args.root)
        path = _wheel(args, project_name, version)
        index = load_index(path)
        if args.against is not None:
            return _print_diff(args.against, index)
    except PackageError as exc:
        print(exc.problem, file=sys.stderr)
        return 2
    except _Stop as exc:
        print(exc, file=sys.stderr)
        return 2
    problems = _frameworks(args) + _pin_and_inventory(args, index, path, project_name, version)
    problems += _handbook(args.root, index)
    took = time.perf_counter() - start
    ok = f"ok: the handbook matches {index.project} {index.version} ({path.name}, {took:.2f} s)"
    return finish(problems, f"against {path.name} ({took:.2f} s)", ok)


def _wheel(args: argparse.Namespace, project_name: str, version: str) -> Path:
    """The wheel to read: ``--wheel``, the cached one, or the pinned one downloaded now."""
    path: Path | None = args.wheel or cached_wheel(args.root)
    if path is None:
        if args.offline:
            raise _Stop(
                f"torch-tpu.pin:1: {project_name}=={version} is not in .cache/wheels/ and --offline was given "
                "(expected a cached wheel, or --wheel PATH)"
            )
        print(f"downloading {project_name}=={version} (no dependencies) into .cache/wheels/ ...", file=sys.stderr)
        path = fetch_wheel(args.root)
    if not path.is_file():
        raise _Stop(f"{path}:1: no such file (expected a .whl)")
    return path


def _frameworks(args: argparse.Namespace) -> list[Problem]:
    """Download the framework wheels of ``frameworks.pin`` that are not cached (unless --offline)."""
    if args.offline or args.wheel is not None:
        return []
    try:
        pins = fwwheels.read_pins(args.root)
    except PackageError as exc:
        return [exc.problem]
    return fwwheels.fetch(args.root, sorted(pins))


def _print_diff(against: Path, index: WheelIndex) -> int:
    if not against.is_file():
        raise _Stop(f"{against}:1: no such file (expected an older .whl)")
    old = load_index(against)
    lines = diff(old, index)
    print(f"{old.project} {old.version} -> {index.project} {index.version}: {len(lines)} change(s)")
    print("\n".join(lines))
    return 0


def _pin_and_inventory(
    args: argparse.Namespace, index: WheelIndex, path: Path, project_name: str, version: str
) -> list[Problem]:
    """The wheel is the pinned release, and docs/data/package.json is its inventory (or is rewritten)."""
    problems: list[Problem] = []
    if (index.project, index.version) != (project_name.lower(), version):
        expected = f"expected {project_name}=={version}, the pin"
        problems.append(Problem("torch-tpu.pin", 1, f"the wheel is {index.project} {index.version} ({expected})"))
    if args.write_inventory:
        (args.root / INVENTORY).write_text(inventory_text(index), "utf-8")
        print(f"wrote {INVENTORY}")
    elif not _inventory_is(args.root, inventory(index)):
        problems.append(
            Problem(
                str(INVENTORY),
                1,
                f"does not match {path.name} (expected the inventory of the pinned "
                "wheel; run 'python -m kb check-wheel --write-inventory' and review the diff)",
            )
        )
    return problems


def _inventory_is(root: Path, expected: dict[str, object]) -> bool:
    """docs/data/package.json is ``expected``: False too when it is missing or not an inventory."""
    try:
        return read_inventory(root / INVENTORY.parent) == expected
    except InventoryError:
        return False


def _handbook(root: Path, index: WheelIndex) -> list[Problem]:
    from ..mkdocs.project import check_package, validate_project

    project = validate_project(root, package=False)
    return project.problems if project.kb is None else check_package(project, index=index)
