"""The test server prints a server error, not a browser dropping a request."""

from __future__ import annotations

import pytest

from .support import _Server


@pytest.mark.parametrize(
    "error, printed", [(ConnectionResetError(), False), (BrokenPipeError(), False), (ValueError("x"), True)]
)
def test_only_errors_that_are_not_a_dropped_connection_are_printed(capsys, error, printed):
    server = _Server.__new__(_Server)  # handle_error reads nothing of the server's state
    try:
        raise error
    except Exception:
        server.handle_error(None, ("127.0.0.1", 1))
    assert ("Exception occurred" in capsys.readouterr().err) is printed
