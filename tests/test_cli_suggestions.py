"""Mistyped options, choices and platform files get a did-you-mean, and no place is named
twice in a not-found message."""

from __future__ import annotations

from pathlib import Path

import pytest

from tlm_models.cli.main import build_parser, main, suggestion
from tlm_models.errors import UserError
from tlm_models.run.config import resolve_platform


def test_a_mistyped_option_names_the_right_one(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--dataflow", "attenio", "--seq-len", "8K", "--head-dim", "64", "--jsn"])
    assert exit_info.value.code == 2
    assert (
        "unrecognized arguments: --jsn; did you mean: --jsn -> --json?" in capsys.readouterr().err
    )


def test_a_mistyped_required_option_is_found_on_the_command_line() -> None:
    parser = build_parser()
    argv = ["run", "--dataflow", "attenio", "--seqlen", "8K", "--head-dim", "64"]
    message = "the following arguments are required: --seq-len"
    assert suggestion(parser, message, argv) == "; did you mean: --seqlen -> --seq-len?"


def test_a_mistyped_choice_and_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["swep"])
    assert "did you mean 'sweep'?" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["run", "--dataflow", "flash", "--seq-len", "8K", "--head-dim", "64"])
    assert "did you mean 'flash2'?" in capsys.readouterr().err


def test_nothing_is_suggested_for_nonsense() -> None:
    assert suggestion(build_parser(), "unrecognized arguments: --zzzzzzzz") == ""


def test_a_missing_platform_names_each_place_once_and_the_close_file() -> None:
    with pytest.raises(UserError) as info:
        resolve_platform("platforms/atenio.yaml")
    message = str(info.value)
    assert "did you mean platforms/attenio.yaml?" in message
    places = message.split("looked for ")[1].split(")")[0].split(" and ")
    assert len(places) == len(set(places))


def test_a_dataflow_spelt_as_in_the_papers_is_suggested_by_its_alias(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """difflib alone matched `flashattention2` to `attenio`."""
    for spelling in ("flashattention2", "FlashAttention-2", "fa2"):
        with pytest.raises(SystemExit):
            main(["run", "--dataflow", spelling, "--seq-len", "8K", "--head-dim", "64"])
        assert "did you mean 'flash2'?" in capsys.readouterr().err


def test_platform_check_and_show_find_files_as_run_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """From another directory `platforms/attenio.yaml` is the package's, and a shipped
    platform's name is its file."""
    monkeypatch.chdir(tmp_path)
    assert main(["platform", "check", "platforms/attenio.yaml"]) == 0
    assert "ok: platform 'attenio'" in capsys.readouterr().out
    assert main(["platform", "show", "attenio-x4"]) == 0
    assert capsys.readouterr().out.startswith("platform attenio-x4")
    assert resolve_platform("edge-small").name == "edge-small.yaml"
    with pytest.raises(UserError, match=r"did you mean platforms/attenio-x4\.yaml"):
        resolve_platform("attenio-x5.yaml")
