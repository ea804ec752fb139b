"""report.html: the strict markup and image check, and the page in a real browser.

`make test` installs Debian's `chromium` when it is missing (the Makefile's `chromium` target,
as for SystemC); the browser check then loads the page headless and fails on a broken image,
a script error or a plot wider than the page (or shrunk to half its size to fit), and leaves
a screenshot under results/report-check/. Without chromium it fails and says how to get it.
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
  const width = document.documentElement.clientWidth;
  // Past the page's edge, or shrunk to fit it to less than half its size (its text then
  // half size: the 5,082-pixel energy strip).
  const wide = [...document.images].filter(i => i.getBoundingClientRect().right > width + 1
    || i.naturalWidth > 2 * i.getBoundingClientRect().width);
  document.body.dataset.overflow = JSON.stringify(wide.map(i => i.getAttribute('src')));
  document.body.dataset.scroll = document.documentElement.scrollWidth - width;
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


#: Where the browser check leaves its screenshot of the page (git-ignored).
SCREENSHOT = Path(__file__).resolve().parent.parent / "results" / "report-check" / "report.png"
#: The browser's window: a laptop screen's width, so a plot wider than that overflows.
WINDOW = "1280,1000"


def _chromium(*args: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("chromium") is None:
        pytest.fail("chromium is missing: `make chromium` (or sudo apt-get install chromium)")
    return subprocess.run(
        ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--window-size={WINDOW}", *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_chromium_renders_the_page_with_every_image_and_no_error(page: Path) -> None:
    probe = page.with_name("probe.html")
    probe.write_text(
        page.read_text(encoding="utf-8").replace("</body>", _PROBE + "</body>"), encoding="utf-8"
    )
    done = _chromium("--virtual-time-budget=10000", "--dump-dom", probe.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    body = re.search(r"<body([^>]*)>", done.stdout)
    assert body is not None, done.stdout[:500]
    attrs = dict(re.findall(r'data-([a-z]+)="([^"]*)"', body.group(1)))
    assert int(attrs["images"]) >= 5
    assert json.loads(attrs["broken"].replace("&quot;", '"')) == []
    assert "errors" not in attrs
    assert json.loads(attrs["overflow"].replace("&quot;", '"')) == []  # every plot fits
    assert int(attrs["scroll"]) <= 0  # nothing else widens the page either
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    SCREENSHOT.unlink(missing_ok=True)
    shot = _chromium("--virtual-time-budget=10000", f"--screenshot={SCREENSHOT}", page.as_uri())
    assert shot.returncode == 0 and SCREENSHOT.stat().st_size > 10_000, shot.stderr[-2000:]
