"""The offline check on built pages: nothing loads from the network, and every local file they load exists."""
from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Iterable, Optional

REMOTE = re.compile(r"^(https?:)?//", re.I)
# In inline scripts and styles: dynamic imports, ES imports, CSS @import / url() of a remote address.
REMOTE_IN_CODE = re.compile(
    r"""(import\s*\(\s*["'](https?:)?//|from\s+["'](https?:)?//|@import\s+(url\()?\s*["']?(https?:)?//|"""
    r"""url\(\s*["']?(https?:)?//|\.src\s*=\s*["'](https?:)?//)""", re.I)


class FetchedRefs(HTMLParser):
    """Collect URLs that a page would fetch by itself (scripts, styles, images, frames), not plain links."""

    FETCHING = {("script", "src"), ("link", "href"), ("img", "src"), ("iframe", "src"), ("source", "src"),
                ("audio", "src"), ("video", "src"), ("embed", "src"), ("object", "data")}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.fetched: list[str] = []
        self.inline: list[str] = []  # the text of inline scripts and styles
        self.tag: Optional[str] = None

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if (tag, name) in self.FETCHING and value:
                self.fetched.append(value)
        self.tag = tag

    def handle_data(self, data):
        if self.tag in ("script", "style"):
            self.inline.append(data)


def parsed(page: Path) -> FetchedRefs:
    """The page's fetched URLs and inline code."""
    parser = FetchedRefs()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def remote_references(page: Path) -> list[str]:
    """Return every remote address `page` (or a CSS file it links) would load: script/style/img src, imports."""
    parser = parsed(page)
    found = [u for u in parser.fetched if REMOTE.match(u)]
    code = list(parser.inline)
    for ref in parser.fetched:
        local = (page.parent / ref.split("?")[0]).resolve()
        if not REMOTE.match(ref) and local.suffix == ".css" and local.exists():
            code.append(local.read_text(encoding="utf-8", errors="replace"))
    for text in code:
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)  # CSS/JS block comments cite URLs harmlessly
        found += [m.group(0) for m in REMOTE_IN_CODE.finditer(text)]
    return found


def local_references(page: Path) -> list[Path]:
    """Return the local files that `page`'s script and link tags load (query strings dropped)."""
    return [(page.parent / u.split("?")[0].split("#")[0]).resolve() for u in parsed(page).fetched
            if not REMOTE.match(u)]


def check_offline(folders: Iterable[Path]) -> int:
    """Check every page in `folders`; print what loads from the network or is missing. Returns 0 if none, else 1."""
    status, checked = 0, 0
    for folder in folders:
        for page in sorted(Path(folder).glob("*.html")):
            checked += 1
            remote = remote_references(page)
            missing = [f for f in local_references(page) if not f.exists()]
            if remote or missing:
                status = 1
                print(f"error: {page}: remote {remote}, missing local files {missing}", file=sys.stderr)
    if status == 0:
        print(f"offline check: {checked} pages load nothing from the network, and every local file they load exists")
    return status
