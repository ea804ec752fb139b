"""report.html: the strict markup and image check always; a real browser when one is there.

CI decision: chromium (Debian's `chromium`, ~290 MB installed) is not installed by the
Makefile; the strict check (``check_html``) runs everywhere, and the browser check runs
where `chromium` is on PATH (it is on the development and CI machine).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_report import _write_results, _write_timelines
from tlm_models.study.report import write_report
from tlm_models.study.report_html import HTML_FILE, check_html

#: Appended to a copy of the page: after load, the body records the images that did not
#: decode and any script error, for `chromium --dump-dom` to print.
_PROBE = """<script>
window.addEventListener('error', e => document.body.dataset.errors =
  (document.body.dataset.errors || '') + e.message + ';');
window.addEventListener('load', () => {
  const broken = [...document.images].filter(i => !i.complete || i.naturalWidth === 0);
  document.body.dataset.images = document.images.length;
  document.body.dataset.broken = JSON.stringify(broken.map(i => i.getAttribute('src')));
});
</script>"""


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("report")
    _write_results(directory)
    _write_timelines(directory)
    write_report(directory)
    return directory / HTML_FILE


def test_the_page_nests_properly_and_every_image_exists(page: Path) -> None:
    assert check_html(page) == []
    text = page.read_text(encoding="utf-8")
    images = re.findall(r'<img [^>]*src="([^"]+)"', text)
    assert {"speedup.png", "offchip.png", "timeline.png"} <= set(images)
    assert "<table>" in text and "Executive summary" in text


def test_the_check_finds_a_missing_image_and_misnested_tags(tmp_path: Path) -> None:
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><p><img src="gone.png"></div></body></html>', encoding="utf-8")
    problems = check_html(bad)
    assert any("gone.png does not exist" in p for p in problems)
    assert any("</div> closes p" in p for p in problems)


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_chromium_renders_the_page_with_every_image_and_no_error(page: Path) -> None:
    probe = page.with_name("probe.html")
    probe.write_text(
        page.read_text(encoding="utf-8").replace("</body>", _PROBE + "</body>"), encoding="utf-8"
    )
    done = subprocess.run(
        [
            "chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
            "--virtual-time-budget=10000", "--dump-dom", probe.as_uri(),
        ],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    body = re.search(r"<body([^>]*)>", done.stdout)
    assert body is not None, done.stdout[:500]
    attrs = dict(re.findall(r'data-([a-z]+)="([^"]*)"', body.group(1)))
    assert int(attrs["images"]) >= 5
    assert json.loads(attrs["broken"].replace("&quot;", '"')) == []
    assert "errors" not in attrs
