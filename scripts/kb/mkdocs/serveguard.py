"""Under ``mkdocs serve``, a rebuild that fails leaves the last good site answering.

MkDocs builds into the folder it serves, cleaning it first; when a rebuild raises (a strict-mode
abort on a warning such as a page missing from the nav or a nav entry whose page was deleted, or
any error), its server holds every request until a rebuild passes ("The server will appear stuck
until build errors are resolved"). ``LastGood`` wraps the server's builder: after each build that
passed it copies the site aside, and after one that failed it prints why, puts that copy back and
returns normally, so the server answers with the last good site until the edit is fixed. A file
that can't be read or written during the build (a page deleted after MkDocs listed it) is named
as ``path:1: reason``, never a traceback.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any


class LastGood:
    """The copy is made beside the server, after the rebuilt site is served: the next rebuild,
    a restore and the shutdown wait for it, so no build writes the site while it is copied."""

    def __init__(self, site: Path) -> None:
        self.site = site
        self.copy = Path(tempfile.mkdtemp(prefix="kb-last-good-")) / "site"
        self.keeping: threading.Thread | None = None
        self.keep()

    def wait(self) -> None:
        """Until the copy of the last good site is complete."""
        if self.keeping is not None:
            self.keeping.join()
            self.keeping = None

    def keep(self) -> None:
        shutil.rmtree(self.copy, ignore_errors=True)
        shutil.copytree(self.site, self.copy, symlinks=True)

    def restore(self) -> None:
        for entry in list(self.site.iterdir()):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
        shutil.copytree(self.copy, self.site, symlinks=True, dirs_exist_ok=True)

    def wrap(self, builder: Callable[..., Any]) -> Callable[..., None]:
        def guarded(*args: Any, **kwargs: Any) -> None:
            self.wait()
            try:
                builder(*args, **kwargs)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001  # MkDocs' Abort is a SystemExit; any error keeps serving
                why = _why(exc)
                print(f"\nrebuild failed: {why} (still serving the last good version)\n", file=sys.stderr, flush=True)
                self.restore()
                return
            self.keeping = threading.Thread(target=self.keep, name="kb-keep-last-good", daemon=True)
            self.keeping.start()

        return guarded

    def close(self) -> None:
        self.wait()
        shutil.rmtree(self.copy.parent, ignore_errors=True)


def _why(exc: BaseException) -> str:
    """The failure as one line; a file that could not be read or written (a page deleted after
    MkDocs listed it, a full disk) as ``path:1: reason``, the path relative to the project."""
    path = getattr(exc, "filename", None)
    if isinstance(exc, OSError) and isinstance(path, str):
        return f"{os.path.relpath(path)}:1: {exc.strerror or exc} (during the build)"
    return str(exc) or type(exc).__name__
