"""A site is published only when its build passed every check: ``python -m kb publish DIR``.

MkDocs writes pages into its site folder as it builds, and the built-site check runs last (the
hook's ``on_post_build``), so a build that failed a check would leave a complete site, bad page
and all, where a deploy step or a reader would take it. Here the build goes into a fresh folder
beside ``DIR`` and replaces ``DIR`` only when MkDocs exited 0; with ``--zip`` the zip is written
from that folder and moved into place the same way. A build that fails, or is interrupted, leaves
``DIR`` and the zip as they were (the last good site, or none) and removes what it wrote.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path

SHOWN_VAR = "KB_SITE_SHOWN"  # the folder the hook names in its problems: DIR, not the fresh one


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dest", help="the site folder to replace, relative to --root (site, site-offline)")
    parser.add_argument("--config", default="mkdocs.yml", help="the MkDocs configuration (default: mkdocs.yml)")
    parser.add_argument("--zip", help="also write this zip of the site, replaced only with the site")


def run(args: argparse.Namespace) -> int:
    return publish(args.root, args.dest, args.config, args.zip)


def publish(root: Path, dest: str, config: str = "mkdocs.yml", zip_name: str | None = None) -> int:
    """Build ``config`` strictly and put it at ``root/dest`` (and ``root/zip_name``) only when it passed."""
    target = root / dest
    target.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".building", dir=target.parent))
    fresh_zip: Path | None = None
    try:
        fresh.chmod(0o777 & ~_umask())  # mkdtemp makes it private; the site is meant to be served
        args = [sys.executable, "-m", "mkdocs", "build", "--strict", "--clean", "-f", config, "-d", str(fresh)]
        code = subprocess.run(args, cwd=root, env={**os.environ, SHOWN_VAR: dest}).returncode
        if code != 0:
            kept = f"{dest}/ is the last good site, unchanged" if target.exists() else f"no {dest}/ was written"
            print(f"build failed: nothing published ({kept})", file=sys.stderr)
            return code
        if zip_name:
            fresh_zip = root / f".{Path(zip_name).name}.building"
            write_zip(fresh, fresh_zip)
        _replace_folder(fresh, target)
        if zip_name and fresh_zip:
            os.replace(fresh_zip, root / zip_name)
        return 0
    finally:
        shutil.rmtree(fresh, ignore_errors=True)  # already moved when the build passed
        if fresh_zip is not None:
            fresh_zip.unlink(missing_ok=True)


def write_zip(folder: Path, path: Path) -> None:
    """Every file and folder under ``folder``, named relative to it, sorted."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for item in sorted(folder.rglob("*")):
            archive.write(item, item.relative_to(folder).as_posix())


def _replace_folder(fresh: Path, target: Path) -> None:
    """Put ``fresh`` at ``target`` by renames: the old site, then (for an instant) none, then the new one."""
    old: Path | None = None
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
        target.rename(old / target.name)
    fresh.rename(target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def shown_site(site: Path, root: Path, environ: Mapping[str, str]) -> str:
    """How problems name the built site: the folder ``publish`` will replace (``SHOWN_VAR``), else
    the site folder relative to the project, else as given."""
    return environ.get(SHOWN_VAR) or (site.relative_to(root).as_posix() if site.is_relative_to(root) else str(site))
