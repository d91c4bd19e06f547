"""MkDocs' command line as ``python -m kb.mkdocs.mkdocsrun ARGS`` (what ``publish`` runs): the same, except
that an ``OSError`` (the disk full, a page deleted during the build) is one ``path:1: message`` line
instead of a traceback, and the exit status is 1."""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> int:
    from mkdocs.__main__ import cli

    try:
        cli.main(args=argv, prog_name="mkdocs")  # exits through SystemExit, as ``mkdocs`` does
    except OSError as exc:
        print(f"{_shown(exc, argv)}:1: {exc.strerror or exc} (during the MkDocs build)", file=sys.stderr)
        return 1
    return 0


def _shown(exc: OSError, argv: list[str]) -> str:
    """The file written (else read), relative, the site folder named as ``publish`` names it."""
    path = exc.filename2 if isinstance(exc.filename2, str) else exc.filename
    if not isinstance(path, str):
        return "the site"
    site = os.path.abspath(argv[argv.index("-d") + 1]) if "-d" in argv[:-1] else None
    shown = os.environ.get("KB_SITE_SHOWN")
    if site and shown and os.path.abspath(path).startswith(site + os.sep):
        return shown.rstrip("/") + "/" + os.path.relpath(path, site)
    return os.path.relpath(path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
