"""Markdown cells: taken apart into math, code, links and prose; what must match between the languages
(parity), bold that JupyterLab cannot render, and English runs left in the Chinese."""
from __future__ import annotations

import os
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from zh import catalog
from zh.catalog import english_notebook

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
MATH = re.compile(r"\$\$.+?\$\$|(?<![\\$])\$(?!\$).+?(?<![\\$])\$", re.S)
LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
ANCHOR = re.compile(r"<a\s+(?:id|name)=[\"']([^\"']+)[\"']", re.I)
HTML_SRC = re.compile(r"<img\b[^>]*\bsrc=[\"']([^\"']+)[\"']", re.I)
HTML_HREF = re.compile(r"<a\b[^>]*\bhref=[\"']([^\"']+)[\"']", re.I)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")


@dataclass
class Markdown:
    """A markdown cell's parts: fenced blocks, code spans, math, links, images, anchors, and the prose left."""

    fences: list[str]
    code: list[str]
    math: list[str]
    links: list[tuple[str, str]]  # (text, target)
    images: list[str]
    anchors: list[str]
    prose: str  # code and math replaced by JupyterLab-like placeholders, links by their text
    prose_with_links: str  # the same with the links as they are


def split_markdown(text: str) -> Markdown:
    """Take a markdown cell apart (fences first, then code spans, then math, as JupyterLab does)."""
    fences, code, math = [], [], []

    def keep(store: list[str], value: str, placeholder: str) -> str:
        store.append(value)
        return placeholder

    text = FENCE.sub(lambda m: keep(fences, m.group(0), "\n"), text)
    text = CODE_SPAN.sub(lambda m: keep(code, m.group(2).strip(), "`x`"), text)
    text = MATH.sub(lambda m: keep(math, " ".join(m.group(0).split()), f"@@{len(math)}@@"), text)
    links = [(m.group(2), m.group(3)) for m in LINK.finditer(text) if not m.group(1)]
    images = [m.group(3) for m in LINK.finditer(text) if m.group(1)] + HTML_SRC.findall(text)
    links += [("", href) for href in HTML_HREF.findall(text)]
    prose = LINK.sub(lambda m: m.group(2), text)
    return Markdown(fences, code, math, links, images, ANCHOR.findall(text), prose, text)


def zh_targets(target: str) -> set[str]:
    """The link targets a zh cell may use for an English cell's target (seen from notebooks/zh/).

    The rule: URLs and #anchors stay as they are; a course notebook (NN_*.ipynb, maybe with #anchor) stays too,
    which from notebooks/zh/ is its Chinese twin; any other relative path gets one more ../ (it is one folder
    deeper), or may point to the file's Chinese version beside it (docs/teaching.md -> docs/teaching.zh.md).
    """
    if target.startswith("#") or SCHEME.match(target):
        return {target}
    path, hash_, anchor = target.partition("#")
    if re.fullmatch(r"\d\d_[^/]+\.ipynb", path):
        return {target}
    resolved = (catalog.ENGLISH / path).resolve()
    out = set()
    for candidate in (resolved, resolved.with_name(f"{resolved.stem}.zh{resolved.suffix}")):
        if candidate == resolved or candidate.exists():
            out.add(os.path.relpath(candidate, catalog.CHINESE).replace(os.sep, "/") + hash_ + anchor)
    return out


def zh_only_link(target: str, nn: str) -> bool:
    """Links the Chinese may add: to the English twin (../NN_*.ipynb) and to the glossary (docs/glossary.md)."""
    path = target.partition("#")[0]
    return path == f"../{english_notebook(nn).name}" or path.endswith("docs/glossary.md")


def _multiset_gap(en: list[str], zh: list[str]) -> tuple[list[str], list[str]]:
    """(in English only, in Chinese only), counting repeats."""
    missing, extra = Counter(en) - Counter(zh), Counter(zh) - Counter(en)
    return sorted(missing.elements()), sorted(extra.elements())


TEXT_IN_MATH = re.compile(r"\\(?:text|textrm|mbox)\s*\{")


def blank_math_text(math: str) -> str:
    """A math span with the words inside \\text{…}, \\textrm{…} and \\mbox{…} blanked (they are prose, translated).

    Everything else (symbols, sub- and superscripts, the commands themselves) stays, so a changed symbol still
    shows: `$c_{\\text{it}}$` and `$c_{\\text{它}}$` both become `$c_{\\text{}}$`; nested braces are followed.
    """
    out, pos = [], 0
    for m in TEXT_IN_MATH.finditer(math):
        if m.start() < pos:
            continue  # inside a \\text{…} already blanked
        depth, end = 1, m.end()
        while end < len(math) and depth:
            depth += {"{": 1, "}": -1}.get(math[end], 0) if math[end - 1] != "\\" else 0
            end += 1
        out.append(math[pos:m.end()] + ("}" if depth == 0 else ""))
        pos = end
    return "".join(out) + math[pos:]


def parity_problems(en_text: str, zh_text: str, nn: str) -> list[str]:
    """What differs between an English markdown cell and its Chinese (an empty list: nothing)."""
    en, zh = split_markdown(en_text), split_markdown(zh_text)
    out = []
    en_math, zh_math = [blank_math_text(x) for x in en.math], [blank_math_text(x) for x in zh.math]
    for name, a, b in (("math spans (words in \\text{…} aside)", en_math, zh_math),
                       ("anchors (<a id>)", en.anchors, zh.anchors)):
        missing, extra = _multiset_gap(a, b)
        if missing or extra:
            out.append(f"{name}: only in the English {missing}, only in the Chinese {extra}")
    missing, extra = _multiset_gap(en.code, zh.code)
    if len(missing) == len(extra) and all(CJK.search(x) for x in extra):
        missing = extra = []  # a code span quoting a message, translated like the message (e.g. `✓ 正确`)
    if missing or extra:
        out.append(f"code spans: only in the English {missing}, only in the Chinese {extra}")
    if len(en.fences) != len(zh.fences):
        out.append(f"fenced code blocks: {len(en.fences)} in the English, {len(zh.fences)} in the Chinese")
    for name, a, b in (("link targets", [t for _, t in en.links], [t for _, t in zh.links]),
                       ("images", en.images, zh.images)):
        left = list(b)
        unmatched = []
        for target in a:
            allowed = zh_targets(target)
            hit = next((t for t in left if t in allowed), None)
            if hit is None:
                unmatched.append(f"{target} (from notebooks/zh/: {' or '.join(sorted(allowed))})")
            else:
                left.remove(hit)
        left = [t for t in left if not (name == "link targets" and zh_only_link(t, nn))]
        if unmatched or left:
            out.append(f"{name}: only in the English {unmatched}, only in the Chinese {left}")
    return out


# -- bold that JupyterLab's marked does not render --------------------------------------------------------------

def _kind(ch: str) -> str:
    """'space', 'punct' (Unicode P* or S*, as CommonMark and marked count it) or 'other'."""
    if not ch or ch.isspace():
        return "space"
    return "punct" if unicodedata.category(ch)[0] in "PS" else "other"


def bold_problems(text: str) -> list[str]:
    """`**` runs that cannot open or close where they should (CommonMark's flanking rules, which marked follows).

    A closing `**` right after punctuation (，。：) and right before a letter or CJK character is not
    right-flanking, so it does not close: `**注意，**这里` shows its asterisks. Likewise an opening `**` right
    before punctuation (“) and right after a letter or CJK character does not open.
    """
    out = []
    for para in re.split(r"\n\s*\n", split_markdown(text).prose):
        runs = [m for m in re.finditer(r"(?<!\*)\*\*(?!\*)", para)]
        for i, m in enumerate(runs):
            before = _kind(para[m.start() - 1] if m.start() else "")
            after = _kind(para[m.end()] if m.end() < len(para) else "")
            opens = after != "space" and (after != "punct" or before != "other")
            closes = before != "space" and (before != "punct" or after != "other")
            role_ok = opens if i % 2 == 0 else closes
            if not role_ok:
                context = para[max(0, m.start() - 12):m.end() + 12].replace("\n", " ")
                side = ("before the closing ** comes punctuation and after it a character" if i % 2
                        else "after the opening ** comes punctuation and before it a character")
                out.append(f"{context!r}: {side}, so JupyterLab shows the asterisks; move the punctuation "
                           f"outside the bold (**注意**，这里) or put a space next to the **")
    return out


# -- English left in the Chinese ----------------------------------------------------------------------------------

ENGLISH_WORDS = 6  # a run of this many English words in a row is a sentence (or most of one), not a term
WORD_RUN = re.compile(r"[A-Za-z][A-Za-z'’-]*(?:[ \t\n,;:]+[A-Za-z][A-Za-z'’-]*){%d,}" % (ENGLISH_WORDS - 1))


ITALIC = re.compile(r"(?<![*\w])\*(?![*\s])([^*\n]+?)(?<!\s)\*(?![*\w])"
                    r"|(?<![_\w])_(?![_\s])([^_\n]+?)(?<!\s)_(?![_\w])")
NAME_WORDS = {"and", "et", "al", "van", "von", "de", "der", "den", "la", "le"}


def english_runs(text: str) -> tuple[list[str], list[str]]:
    """(English runs in the prose, English runs in citations) of a markdown cell.

    Code, math, HTML tags and link targets do not count. Citations are a link's text and italics (the title
    of a cited work, kept in its language so that the reader can find it), and lists of names ("Vaswani,
    Shazeer, Parmar and …": every word capitalised); quoted English is prose like any other.
    """
    md = split_markdown(text)
    prose = re.sub(r"<[^>]+>", " ", md.prose_with_links)
    cited = [t for t, _ in md.links] + [m.group(1) or m.group(2) for m in ITALIC.finditer(LINK.sub(" ", prose))]
    prose = ITALIC.sub(" ", LINK.sub(" ", prose))
    runs, names = [], []
    for m in WORD_RUN.finditer(prose):
        words = re.findall(r"[A-Za-z][A-Za-z'’-]*", m.group(0))
        names_only = all(w[0].isupper() or w in NAME_WORDS for w in words)
        (names if names_only else runs).append(" ".join(m.group(0).split()))
    cited = [" ".join(m.group(0).split()) for t in cited for m in WORD_RUN.finditer(t)] + names
    return runs, cited
