"""Under serve, an edit is seen within kb/mkdocs/watcher.py's POLL_S, on the paths MkDocs watched."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from mkdocs.livereload import LiveReloadServer
from watchdog.utils.dirsnapshot import EmptyDirectorySnapshot

from buildtools import HANG_S
from kb.mkdocs.watcher import POLL_S, WatcherError, quicken


def _server(tmp_path: Path) -> tuple[LiveReloadServer, Path]:
    docs, config = tmp_path / "docs", tmp_path / "mkdocs.yml"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n", "utf-8")
    config.write_text("site_name: T\n", "utf-8")
    server = LiveReloadServer(builder=lambda: None, host="127.0.0.1", port=0, root=str(tmp_path / "site"))
    server.watch(str(docs))
    server.watch(str(config))
    return server, docs


def _seen(server: LiveReloadServer, edit: Path) -> bool:
    """Whether an edit to ``edit`` makes the server want a rebuild. The edit is made once every
    watch has taken its first look at the files (watchdog's first snapshot), so a busy machine
    can't fold it into that look; the waits only guard against a hang."""
    server.observer.start()
    try:
        deadline = time.monotonic() + HANG_S
        while any(isinstance(e._snapshot, EmptyDirectorySnapshot) for e in server.observer.emitters):
            assert time.monotonic() < deadline, "the observer never took its first look at the files"
            time.sleep(POLL_S / 10)
        edit.write_text(edit.read_text("utf-8") + "more\n", "utf-8")
        with server._rebuild_cond:
            return server._rebuild_cond.wait_for(lambda: server._want_rebuild, timeout=HANG_S)
    finally:
        server.observer.stop()
        server.observer.join()


def test_the_quicker_observer_watches_the_same_paths_and_sees_an_edit(tmp_path):
    server, docs = _server(tmp_path)
    before = dict(server._watched_paths)
    assert server.observer.timeout == 0.5  # MkDocs' own
    quicken(server)
    assert server.observer.timeout == POLL_S < 0.5
    assert server._watched_paths == before and len(server.observer.emitters) == 2
    assert _seen(server, docs / "a.md")


def test_the_config_file_is_still_watched(tmp_path):
    server, _ = _server(tmp_path)
    quicken(server)
    assert _seen(server, tmp_path / "mkdocs.yml")


def test_a_started_server_is_left_as_it_was(tmp_path):
    server, _ = _server(tmp_path)
    observer = server.observer
    observer.start()
    try:
        assert quicken(server).observer is observer
    finally:
        observer.stop()
        observer.join()


def test_watches_that_did_not_move_are_an_error(tmp_path, monkeypatch):
    server, _ = _server(tmp_path)
    monkeypatch.setattr(server, "watch", lambda path, recursive=True: None)  # a server that drops them
    with pytest.raises(WatcherError, match="instead of"):
        quicken(server)
