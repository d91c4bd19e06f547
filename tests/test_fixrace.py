"""An editor's save in the instant after ``--fix``'s last check and before its rename is kept.

Editors take no lock, so the save is made by a test hook (``kb.fixwrite.AFTER_CHECK``) at the
worst moment: the file has just been found unchanged and the fixed text is about to replace it.
Both ways an editor saves are tried: writing into the file (``>>``, the same inode) and writing a
new file renamed over it (a new inode). The user's save must be what the path holds afterwards,
with a message, and no temporary file left. What cannot be closed (a write through the same
inode for a hard-linked file, a write landing after the re-check) is in CONTRIBUTING.md."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import ROOT

SHIFTY = "import torch\ny = torch.cuda.device_count(); p(12); torch.cuda.synchronize()\n"
FIXED = SHIFTY.replace("cuda", "accelerator")
SAVED = SHIFTY + "saved = 1\n"


def fix_here(*paths: Path) -> int:
    from kb.__main__ import main

    return main(["--root", str(ROOT), "scan", "--fix", "--jobs", "1", *map(str, paths)])


def save_in_place(path: Path) -> None:
    with path.open("a") as out:
        out.write("saved = 1\n")


def save_by_rename(path: Path) -> None:
    swap = path.with_name(path.name + ".swp")
    swap.write_text(SAVED)
    os.replace(swap, path)


@pytest.mark.parametrize("save", [save_in_place, save_by_rename])
def test_a_save_right_after_the_last_check_is_what_the_file_holds(tmp_path, monkeypatch, capsys, save):
    import kb.fixwrite

    script = tmp_path / "t.py"
    script.write_text(SHIFTY)
    (tmp_path / "other.py").write_text(SHIFTY)
    saved: list[Path] = []

    def hook(path: Path) -> None:
        if path.name == "t.py":
            save(path)
            saved.append(path)

    monkeypatch.setattr(kb.fixwrite, "AFTER_CHECK", hook)
    assert fix_here(script, tmp_path / "other.py") != 0
    assert saved, "the hook never ran"
    assert script.read_text() == SAVED
    assert (tmp_path / "other.py").read_text() == FIXED  # the file nobody touched is fixed
    err = capsys.readouterr().err
    assert f"{script}:1: changed while writing; left as the user saved it" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.py", "t.py"]  # no temp file left


def test_without_renameat2_a_save_into_the_file_is_still_put_back(tmp_path, monkeypatch, capsys):
    import kb.fixwrite

    script = tmp_path / "t.py"
    script.write_text(SHIFTY)
    script.chmod(0o640)
    monkeypatch.setattr(kb.fixwrite, "exchange", lambda a, b: False)
    monkeypatch.setattr(kb.fixwrite, "AFTER_CHECK", save_in_place)
    assert fix_here(script) != 0
    assert script.read_text() == SAVED and script.stat().st_mode & 0o777 == 0o640
    assert f"{script}:1: changed while writing; left as the user saved it" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["t.py"]


def test_with_no_save_the_fix_is_made_with_either_swap(tmp_path, monkeypatch):
    import kb.fixwrite

    for name, exchange in (("a.py", kb.fixwrite.exchange), ("b.py", lambda a, b: False)):
        monkeypatch.setattr(kb.fixwrite, "exchange", exchange)
        (tmp_path / name).write_text(SHIFTY)
        assert fix_here(tmp_path / name) == 0
        assert (tmp_path / name).read_text() == FIXED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py"]


def test_a_save_by_rename_while_a_hard_linked_file_is_written_in_place_is_kept(tmp_path, monkeypatch, capsys):
    import kb.fixwrite

    script = tmp_path / "t.py"
    script.write_text(SHIFTY)
    os.link(script, tmp_path / "t2.py")  # written in place, through the inode both names share
    monkeypatch.setattr(kb.fixwrite, "AFTER_CHECK", save_by_rename)
    assert fix_here(script) != 0
    assert script.read_text() == SAVED
    assert (tmp_path / "t2.py").read_text() == SHIFTY  # the other name: as it was, not half a change
    assert f"{script}:1: changed while writing; left as the user saved it" in capsys.readouterr().err
