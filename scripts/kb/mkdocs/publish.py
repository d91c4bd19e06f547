"""A site is published only when its build passed every check: ``python -m kb publish DIR``.

MkDocs writes pages into its site folder as it builds, and the built-site check runs last (the
hook's ``on_post_build``), so a build that failed a check would leave a complete site, bad page
and all, where a deploy step or a reader would take it. Here the build goes into a fresh folder
beside ``DIR`` and replaces ``DIR`` only when MkDocs exited 0; with ``--zip`` the zip is written
from that folder and renamed into place just after it, under the same rules (``kb.mkdocs.zipdest``: never
the project, the docs, ``mkdocs.yml`` or a file an earlier publish did not write). A build that
fails, or is interrupted, leaves ``DIR`` and the zip as they were (the last good site, or none)
and removes what it wrote.

``DIR`` must be a folder an earlier publish wrote, or none (``kb.mkdocs.sitedest``: never the project, the
docs folder or a folder holding them; its dotfiles such as ``.git`` and ``.nojekyll`` are carried
into the new site), and the swap is atomic where Linux allows. SIGTERM, SIGHUP or Ctrl-C ends
MkDocs (which is also sent SIGTERM if this process is killed) and removes the building folder. A
failure is one plain line, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ..core.stopping import Stopped, die_with_parent, signal_name, stoppable
from .sitedest import DestError, carry_dotfiles, check_owned, hold, refuse_early, remove, swap, sweep, write_marker
from .zipdest import check_zip_owned, refuse_zip, replace_zip, sweep_zips, write_zip

SHOWN_VAR = "KB_SITE_SHOWN"  # the folder the hook names in its problems: DIR, not the fresh one


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dest", help="the site folder to replace, relative to --root (site, site-offline)")
    parser.add_argument("--config", default="mkdocs.yml", help="the MkDocs configuration (default: mkdocs.yml)")
    parser.add_argument("--zip", help="also write this zip of the site, replaced only with the site")


def run(args: argparse.Namespace) -> int:
    try:
        with stoppable():
            return publish(args.root, args.dest, args.config, args.zip)
    except DestError as exc:
        print(f"publish: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        where = exc.filename or args.dest
        print(f"publish: {where}: {exc.strerror or exc}; nothing published", file=sys.stderr)
        return 1
    except (Stopped, KeyboardInterrupt) as exc:
        signum, name = signal_name(exc)
        print(f"publish: stopped by {name}; nothing published", file=sys.stderr)
        return 128 + signum


def publish(root: Path, dest: str, config: str = "mkdocs.yml", zip_name: str | None = None) -> int:
    """Build ``config`` strictly and put it at ``root/dest`` (and ``root/zip_name``) only when it passed."""
    refuse_early(root, dest, config)
    if zip_name:
        refuse_zip(root, zip_name, dest, config)
    target = root / dest
    target.parent.mkdir(parents=True, exist_ok=True)
    sweep(target.parent, target.name)  # what a killed publish left
    zip_path = root / zip_name if zip_name else None
    if zip_path is not None:
        zip_path.parent.mkdir(parents=True, exist_ok=True)
        sweep_zips(zip_path.parent, zip_path.name)
    fresh = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".building", dir=target.parent))
    held = hold(fresh)
    zipped: tuple[int, Path] | None = None
    try:
        fresh.chmod(0o777 & ~_umask())  # mkdtemp makes it private; the site is meant to be served
        code = _build(root, dest, config, fresh)
        if code != 0:
            kept = f"{dest}/ is the last good site, unchanged" if target.exists() else f"no {dest}/ was written"
            print(f"build failed: nothing published ({kept})", file=sys.stderr)
            return code
        if zip_name and zip_path is not None:
            zipped = write_zip(fresh, zip_path)
            check_zip_owned(zip_path, zip_name)  # before the site is swapped: both or neither
        _replace_folder(fresh, target, dest)
        if zipped is not None and zip_name and zip_path is not None:
            replace_zip(zipped[1], zip_path, zip_name)
        return 0
    finally:
        remove(fresh)  # the old site after the swap, or the failed build
        os.close(held)
        if zipped is not None:
            zipped[1].unlink(missing_ok=True)
            os.close(zipped[0])


def _build(root: Path, dest: str, config: str, fresh: Path) -> int:
    """MkDocs' strict build of ``config`` into ``fresh``: its exit status."""
    args = [sys.executable, "-m", "kb.mkdocs.mkdocsrun", "build", "--strict", "--clean", "-f", config, "-d", str(fresh)]
    here = str(Path(__file__).resolve().parents[2])  # where kb is, for python -m kb.mkdocs.mkdocsrun
    env = {
        **os.environ,
        SHOWN_VAR: dest,
        "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")])),
    }
    return subprocess.run(args, cwd=root, env=env, preexec_fn=die_with_parent).returncode


def _replace_folder(fresh: Path, target: Path, dest: str) -> None:
    """Swap ``fresh`` in at ``target`` when every path there is the last publish's, carrying its
    dotfiles over (moved back if the swap fails)."""
    write_marker(fresh)
    check_owned(target, dest)
    moves = carry_dotfiles(target, fresh, dest)
    try:
        swap(fresh, target)
    except BaseException:
        for src, dst in moves:
            os.rename(dst, src)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def shown_site(site: Path, root: Path, environ: Mapping[str, str]) -> str:
    """How problems name the built site: the folder ``publish`` will replace (``SHOWN_VAR``), else
    the site folder relative to the project, else as given."""
    return environ.get(SHOWN_VAR) or (site.relative_to(root).as_posix() if site.is_relative_to(root) else str(site))
