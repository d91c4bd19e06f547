"""Whether this checkout's scanner finds exactly what another checkout's finds (printed; exit 1 if not).

  python benchmarks/scan_same.py [--base /work/main] [--tree DIR] [--mirror-root /work/.mirror] [--labels PATH]

For a speed change that must not change any finding. Both scanners run ``python -m kb --root PROJECT scan
--format json`` (PYTHONPATH=PROJECT/scripts, this interpreter) on the same inputs:

- the tree (default: every ``.py`` file of the installed torch package, scanned in place);
- the labelled real code of benchmarks/scan_labels.yml, extracted from the mirrors as scan_eval.py does
  (skipped, with a note, when a mirror is missing).

Every finding is compared field by field (related locations included), and so is every problem. Exit
status: 0 when both agree on every input, 1 when they differ (the first differences are printed), 2 when
a scanner or the labels can't be used.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from scan_eval import DEFAULT_LABELS, DEFAULT_MIRROR, EvalError, extract, load_labels, run_scanner  # noqa: E402

SHOWN = 10  # differences printed per input


def _rows(doc: dict[str, Any], key: str) -> list[str]:
    """One canonical JSON line per finding (or problem), sorted."""
    return sorted(json.dumps(row, sort_keys=True, ensure_ascii=False) for row in doc.get(key) or [])


def compare(name: str, base: dict[str, Any], ours: dict[str, Any]) -> bool:
    """Print how the two reports of one input compare; True when they are the same."""
    same = True
    for key in ("findings", "problems"):
        a, b = _rows(base, key), _rows(ours, key)
        only_base = sorted(set(a) - set(b))
        only_ours = sorted(set(b) - set(a))
        if a == b:
            print(f"{name}: {len(a)} {key}, identical")
            continue
        same = False
        print(f"{name}: {key} differ: {len(a)} in base, {len(b)} here", end="; ")
        print(f"{len(only_base)} only in base, {len(only_ours)} only here")
        for row in only_base[:SHOWN]:
            print(f"  - {row}")
        for row in only_ours[:SHOWN]:
            print(f"  + {row}")
    return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, default=Path("/work/main"), help="the checkout to compare with")
    parser.add_argument("--tree", type=Path, help="a folder of Python code (default: the installed torch package)")
    parser.add_argument("--mirror-root", type=Path, default=DEFAULT_MIRROR)
    parser.add_argument("--labels", type=Path, default=DEFAULT_LABELS)
    args = parser.parse_args(argv)
    if args.tree is None:
        import torch  # this interpreter's torch: its sources are the default tree

        args.tree = Path(torch.__file__).parent
    python = sys.executable
    same = True
    try:
        inputs = [("tree", args.tree)]
        with tempfile.TemporaryDirectory(prefix="scan-same-") as tmp:
            try:
                extract(load_labels(args.labels), args.mirror_root, Path(tmp))
                inputs.append(("labelled code", Path(tmp)))
            except EvalError as exc:
                print(f"labelled code: skipped ({exc})")
            for name, path in inputs:
                base = run_scanner(args.base.resolve(), python, path)
                ours = run_scanner(ROOT, python, path)
                same = compare(name, base, ours) and same
    except EvalError as exc:
        print(f"scan_same: {exc}", file=sys.stderr)
        return 2
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
