"""Command line: ``python -m kb validate`` (data and pages), ``check-site SITE``, ``check-wheel``,
``scan PATH...`` (what in PyTorch code ties it to CUDA, NCCL or PyTorch-XLA), ``review`` (what is due
for review), ``publish DIR`` (build the site, and replace DIR only when every check passed),
``render --out DIR`` (the pages rendered for plain MkDocs)."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

# Each command: its help, and where its ``add_arguments`` (or none) and ``run`` are, as
# ``module:function``. A command's module is imported only when that command runs.
COMMANDS = {
    "validate": (
        "check the KB tables and every page (links, shortcodes, front matter, URLs)",
        "",
        "cli.commands:validate",
    ),
    "check-site": (
        "check a built site: links, anchors, assets, external loads",
        "cli.commands:add_check_site",
        "cli.commands:check_site",
    ),
    "check-wheel": (
        "hold every name, env var, locator and version range to the pinned wheel",
        "cli.wheelcmd:add_arguments",
        "cli.wheelcmd:run",
    ),
    "scan": (
        "list what in Python code ties it to CUDA, NCCL or PyTorch-XLA",
        "scan.scanrun:add_arguments",
        "scan.scanrun:run",
    ),
    "review": (
        "list the pages and records due for review, and why (exit 1 when any is due)",
        "cli.reviewcmd:add_arguments",
        "cli.reviewcmd:run",
    ),
    "publish": (
        "build the site beside DIR and replace DIR only when every check passed",
        "mkdocs.publish:add_arguments",
        "mkdocs.publish:run",
    ),
    "render": (
        "write the pages rendered, for plain MkDocs, into DIR",
        "cli.commands:add_render",
        "cli.commands:render",
    ),
}


def _load(where: str) -> object:
    module, _, name = where.partition(":")
    try:
        found = importlib.import_module(f".{module}", __package__ or "kb")
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("kb."):
            raise
        print(
            f"python -m kb: this command needs the handbook's checkout ({exc.name} is not installed here; the "
            "torchtpu-scan package holds the scanner alone: run torchtpu-scan PATH)",
            file=sys.stderr,
        )
        raise SystemExit(2) from None
    return getattr(found, name)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m kb", description=__doc__)
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="project folder (holds docs/ and mkdocs.yml)")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_text, add, _) in COMMANDS.items():
        command = sub.add_parser(name, help=help_text)
        if add and name in argv:  # only the command that runs pays for its imports
            _load(add)(command)  # type: ignore[operator]
    args = parser.parse_args(argv)
    return int(_load(COMMANDS[args.command][2])(args))  # type: ignore[operator]


if __name__ == "__main__":
    sys.exit(main())
