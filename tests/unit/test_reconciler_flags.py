"""`omereconcile run`'s address and certificate flags: refused with a usage error (exit 2) that says
what to write, never a traceback at start-up."""

from __future__ import annotations

import argparse

import pytest

from omereconcile.cli import _addr, main


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (":9443", ("0.0.0.0", 9443)),
        ("127.0.0.1:8081", ("127.0.0.1", 8081)),
        ("[::]:9443", ("::", 9443)),
        ("[::1]:0", ("::1", 0)),
    ],
)
def test_addresses_are_read_as_go_reads_a_bind_address(text: str, want: tuple[str, int]) -> None:
    assert _addr(text) == want


@pytest.mark.parametrize("text", ["9443", "::1:9443", ":x", ":70000", "host:", ""])
def test_a_malformed_address_is_a_usage_error(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        _addr(text)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["run", "--webhook-cert", "tls.crt"], "--webhook-cert needs --webhook-key"),
        (["run", "--webhook-key", "tls.key"], "--webhook-key needs --webhook-cert"),
        (["run", "--webhook-addr", "9443"], "is not HOST:PORT"),
        (["run", "--probe-addr", "::1:8081"], "in brackets"),
    ],
)
def test_run_refuses_bad_flags_before_touching_the_cluster(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert says in capsys.readouterr().err
