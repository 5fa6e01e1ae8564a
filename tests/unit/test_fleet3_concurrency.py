"""`omereconcile run --concurrency`: the default worker count and the flag's spellings."""

from __future__ import annotations

import pytest

from omereconcile.cli import DEFAULT_CONCURRENCY, _parser


def test_default_concurrency_is_two_workers() -> None:
    # docs/reconciler.md, "Workers and the 10% roll": more workers cost a settling fleet reads and writes.
    args = _parser().parse_args(["run"])
    assert args.workers == DEFAULT_CONCURRENCY == 2


@pytest.mark.parametrize("flag", ["--concurrency", "--workers"])
def test_concurrency_flag_keeps_controller_runtime_name_and_alias(flag: str) -> None:
    assert _parser().parse_args(["run", flag, "3"]).workers == 3


def test_concurrency_zero_is_refused_naming_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        _parser().parse_args(["run", "--concurrency", "0"])
    assert exc.value.code == 2
    assert "--concurrency" in capsys.readouterr().err
