"""Every relative link of the documentation opens a file of the repository, and no page
sends the reader to a path outside it (docs/study.md named a file of the machine it was
written on)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", ROOT / "traces" / "README.md", *ROOT.glob("docs/**/*.md")])
_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)
_LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_links_stay_in_the_repository(page: Path) -> None:
    text = _CODE.sub("", page.read_text(encoding="utf-8"))
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # a web address or a place on the same page
        path = (page.parent / target.split("#", 1)[0]).resolve()
        assert path.is_relative_to(ROOT), f"{page.name}: {target} leaves the repository"
        assert path.exists(), f"{page.name}: {target} does not exist"
    outside = re.findall(r"(?<![\w.])/(?:work|root|home|tmp)/\S+", page.read_text("utf-8"))
    assert not outside, f"{page.name} names paths of one machine: {outside}"
