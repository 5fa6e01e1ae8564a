"""`omereconcile run`'s flags (addresses, certificates, ``--shards``, ``--user-agent``) and the kubeconfig
of ``run`` and ``plan``: refused with a usage error (exit 2) that says what to write, never a traceback at
start-up."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from omereconcile import logs
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
        (["run", "--shards", "0"], "argument --shards: must be at least 1, got 0"),
        (["run", "--shards", "two"], "argument --shards: 'two' is not a whole number"),
        (
            ["run", "--shards", "2", "--renew-deadline", "20"],
            "< --renew-deadline (20) < --lease-duration (15)",
        ),
        (["run", "--shards", "3", "--retry-period", "0"], "--shards 3 needs 0 < --retry-period (0)"),
        (["run", "--shard-lease-prefix", "Shard/A"], "argument --shard-lease-prefix: 'Shard/A' cannot start"),
        (["run", "--shard-lease-prefix=x-"], "use lowercase letters, digits, '-' and '.'"),
        (["run", "--shard-lease-prefix", "a" * 201], "at most 200 characters"),
        (["run", "--user-agent", ""], "argument --user-agent: is empty; omit the flag"),
        (["run", "--user-agent", "omereconcile/a\r\nX-Evil: 1"], "which an HTTP header cannot carry"),
        (["run", "--user-agent", "omereconcile/\u2192"], "use printable ASCII"),
    ],
)
def test_run_refuses_bad_flags_before_touching_the_cluster(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert says in capsys.readouterr().err


KUBECONFIGS = {
    "empty": (b"", "file is empty"),
    "binary": (bytes(range(128, 256)) * 4, "not a text file (a kubeconfig is YAML)"),
    "not yaml": (b"clusters: [\n", "not valid YAML"),
    "a list": (
        b"- a\n- b\n",
        "not a kubeconfig: a YAML mapping whose clusters, contexts and users are lists",
    ),
    "wrong shape": (b"apiVersion: v1\nkind: Config\nclusters: 5\n", "not a kubeconfig"),
}


@pytest.mark.parametrize("command", [["run"], ["plan", "pool"]])
@pytest.mark.parametrize("case", sorted(KUBECONFIGS))
def test_an_unusable_kubeconfig_is_one_line_naming_the_file_and_the_fix_exit_2(
    command: list[str],
    case: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(logs, "setup", lambda *_a, **_k: None)  # run's JSON logging would outlive the test
    content, says = KUBECONFIGS[case]
    path = tmp_path / "kubeconfig"
    path.write_bytes(content)
    assert main([*command, "--kubeconfig", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err, err
    assert f"cannot load the kubeconfig: {path}: " in err, err
    assert says in err, err
    assert "pass a working one with --kubeconfig" in err, err


def test_a_missing_kubeconfig_says_no_such_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logs, "setup", lambda *_a, **_k: None)
    assert main(["run", "--kubeconfig", str(tmp_path / "none")]) == 2
    assert f"cannot load the kubeconfig: {tmp_path / 'none'}: no such file;" in capsys.readouterr().err
