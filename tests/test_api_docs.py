"""docs/api.md: every example on the page runs and prints what the page shows."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parent.parent / "docs" / "api.md"


def test_api_page_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(PAGE.parent.parent)
    failures, tried = doctest.testfile(
        str(PAGE),
        module_relative=False,
        globs={"tmp": tmp_path},
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        raise_on_error=False,
        verbose=False,
    )
    assert tried > 40
    assert failures == 0
