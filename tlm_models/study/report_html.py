"""DIR/report.html: report.md as one HTML page with the plots inline, for a browser.

The page is static (no scripts, no network): a small stylesheet, the Markdown converted with
tables, and the PNG plots referenced by relative path so the directory can be moved or
zipped as a whole. ``check_html`` is the strict check the tests run on every page: the
markup nests properly and every image it links exists as a PNG.
"""

from __future__ import annotations

import html
from html.parser import HTMLParser
from pathlib import Path

__all__ = ["HTML_FILE", "check_html", "markdown_to_html"]

HTML_FILE = "report.html"

_STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 1200px; margin: 2em auto;
       padding: 0 1em; color: #222; }
h1, h2, h3 { line-height: 1.2; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; }
table { border-collapse: collapse; margin: .8em 0; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: .25em .6em; }
th { background: #f3f3f3; } td { text-align: right; } td:first-child { text-align: left; }
img { max-width: 100%; height: auto; display: block; margin: .8em 0; }
code { background: #f3f3f3; padding: 0 .2em; }
"""

_VOID = {"img", "br", "hr", "meta", "link", "input", "col", "area", "base", "source", "wbr"}


def markdown_to_html(text: str, title: str) -> str:
    """A complete HTML page of the Markdown ``text``."""
    import markdown

    body = markdown.markdown(text, extensions=["tables", "sane_lists"], output_format="html")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )


class _Checker(HTMLParser):
    def __init__(self, directory: Path) -> None:
        super().__init__()
        self.directory = directory
        self.open: list[str] = []
        self.problems: list[str] = []
        self.images: list[Path] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":
            src = dict(attrs).get("src") or ""
            path = self.directory / src
            self.images.append(path)
            if not src or "://" in src:
                self.problems.append(f"line {self.getpos()[0]}: image source {src!r} not local")
            elif not path.is_file():
                self.problems.append(f"line {self.getpos()[0]}: image {src} does not exist")
            elif path.read_bytes()[:8] != b"\x89PNG\r\n\x1a\n":
                self.problems.append(f"line {self.getpos()[0]}: image {src} is not a PNG")
        if tag not in _VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            return
        if not self.open or self.open[-1] != tag:
            expected = self.open[-1] if self.open else "nothing"
            self.problems.append(f"line {self.getpos()[0]}: </{tag}> closes {expected}")
            return
        self.open.pop()


def check_html(path: Path) -> list[str]:
    """Problems of the page at ``path``: misnested tags, unclosed tags, missing images."""
    checker = _Checker(path.parent)
    checker.feed(path.read_text(encoding="utf-8"))
    checker.close()
    problems = checker.problems
    if checker.open:
        problems.append(f"unclosed tags at the end: {', '.join(checker.open)}")
    return problems
