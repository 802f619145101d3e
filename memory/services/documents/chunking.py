"""Splitting a document into chunks that each keep their section path.

Markdown splits on `#` headings (outside code fences), reStructuredText on
underlined (and overlined) titles, HTML on `h1`-`h6` (parsed with the
standard library; scripts and styles dropped), plain text on blank-line
paragraphs. A section longer than MAX_CHARS is cut on paragraph boundaries,
then sentences, then words, so no chunk is longer than the bound. Each chunk
keeps the headings above it joined by " > " ("Install > Docker").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

MAX_CHARS = 1200
SEPARATOR = " > "
FORMATS = ("markdown", "rst", "html", "text")

_EXTENSIONS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",
    ".html": "html",
    ".htm": "html",
    ".txt": "text",
}


@dataclass(frozen=True, slots=True)
class Chunk:
    section: str
    text: str


def format_for(path: str) -> str | None:
    """The format of a file by its name, or None when it is not indexed."""
    lower = path.lower()
    for ext, kind in _EXTENSIONS.items():
        if lower.endswith(ext):
            return kind
    return None


def guess_format(text: str) -> str:
    """For text posted without a path: HTML, Markdown headings, or plain."""
    head = text.lstrip()[:2000].lower()
    if head.startswith(("<!doctype html", "<html")) or re.search(r"<h[1-6][\s>]", head):
        return "html"
    if re.search(r"(?m)^#{1,6}\s+\S", text):
        return "markdown"
    if _RST_UNDERLINE.search(text):
        return "rst"
    return "text"


def chunk(text: str, *, fmt: str, max_chars: int = MAX_CHARS) -> list[Chunk]:
    """The document's chunks in reading order; empty sections are dropped."""
    if fmt == "markdown":
        sections = _markdown(text)
    elif fmt == "rst":
        sections = _rst(text)
    elif fmt == "html":
        sections = _html(text)
    else:
        sections = [([], text)]
    out: list[Chunk] = []
    for path, body in sections:
        section = SEPARATOR.join(p for p in path if p)
        for part in _bounded(body, max_chars):
            out.append(Chunk(section=section[:1000], text=part))
    return out


# --- Markdown -----------------------------------------------------------------


_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _markdown(text: str) -> list[tuple[list[str], str]]:
    sections: list[tuple[list[str], str]] = []
    path: list[str] = []
    lines: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        m = None if fenced else _MD_HEADING.match(line)
        if m is None:
            lines.append(line)
            continue
        sections.append((list(path), "\n".join(lines)))
        lines = []
        level = len(m.group(1))
        path = path[: level - 1] + [""] * max(0, level - 1 - len(path)) + [m.group(2).strip()]
    sections.append((list(path), "\n".join(lines)))
    return sections


# --- reStructuredText ---------------------------------------------------------------


_RST_CHARS = "=-~^\"'`#*+_:.<>"
_RST_UNDERLINE = re.compile(r"(?m)^(\S.*)\n([" + re.escape(_RST_CHARS) + r"])\2{2,}\s*$")


def _is_rule(line: str) -> bool:
    s = line.rstrip()
    return len(s) >= 3 and s[0] in _RST_CHARS and s == s[0] * len(s)


def _rst(text: str) -> list[tuple[list[str], str]]:
    """Titles are a line underlined (optionally overlined too) with one
    punctuation character; levels are the order styles first appear in."""
    lines = text.splitlines()
    styles: list[tuple[str, bool]] = []
    sections: list[tuple[list[str], str]] = []
    path: list[str] = []
    body: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        over = (
            _is_rule(line)
            and i + 2 < len(lines)
            and lines[i + 1].strip()
            and _is_rule(lines[i + 2])
            and lines[i + 2].rstrip()[0] == line.rstrip()[0]
        )
        under = (
            not over
            and line.strip()
            and not _is_rule(line)
            and i + 1 < len(lines)
            and _is_rule(lines[i + 1])
            and len(lines[i + 1].rstrip()) >= len(line.strip())
        )
        if over or under:
            title = (lines[i + 1] if over else line).strip()
            style = ((lines[i] if over else lines[i + 1]).rstrip()[0], bool(over))
            if style not in styles:
                styles.append(style)
            level = styles.index(style) + 1
            sections.append((list(path), "\n".join(body)))
            body = []
            path = path[: level - 1] + [""] * max(0, level - 1 - len(path)) + [title]
            i += 3 if over else 2
            continue
        body.append(line)
        i += 1
    sections.append((list(path), "\n".join(body)))
    return sections


# --- HTML -----------------------------------------------------------------------------


# Not document text: code, styling, and the head's <title> (a file's title comes
# from its first heading).
_SKIPPED = ("script", "style", "template", "noscript", "title")
_BLOCKS = {"p", "div", "li", "br", "tr", "pre", "section", "article", "table", "ul", "ol"}


class _HtmlSections(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[tuple[list[str], str]] = []
        self.path: list[str] = []
        self.body: list[str] = []
        self.heading: tuple[int, list[str]] | None = None
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self.skip += 1
        elif re.fullmatch(r"h[1-6]", tag) and self.heading is None:
            self.sections.append((list(self.path), "".join(self.body)))
            self.body = []
            self.heading = (int(tag[1]), [])
        elif tag in _BLOCKS:
            self.body.append("\n\n" if tag in ("p", "div", "section", "article") else "\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED:
            self.skip = max(0, self.skip - 1)
        elif re.fullmatch(r"h[1-6]", tag) and self.heading is not None:
            level, words = self.heading
            title = " ".join("".join(words).split())
            self.path = self.path[: level - 1] + [""] * max(0, level - 1 - len(self.path))
            self.path.append(title)
            self.heading = None
        elif tag in _BLOCKS:
            self.body.append("\n")

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.heading is not None:
            self.heading[1].append(data)
        else:
            self.body.append(data)

    def result(self) -> list[tuple[list[str], str]]:
        return [*self.sections, (list(self.path), "".join(self.body))]


def _html(text: str) -> list[tuple[list[str], str]]:
    parser = _HtmlSections()
    parser.feed(text)
    parser.close()
    out = []
    for path, body in parser.result():
        # Collapse the markup's own whitespace inside lines, keep paragraphs.
        lines = [" ".join(line.split()) for line in body.splitlines()]
        out.append((path, re.sub(r"\n{3,}", "\n\n", "\n".join(lines))))
    return out


# --- the size bound -----------------------------------------------------------------


_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")


def _pieces(text: str, max_chars: int) -> list[str]:
    """Units no longer than max_chars: paragraphs, else their sentences,
    else words (a word longer than the bound is cut)."""
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        para = para.strip()
        if not para:
            continue
        if len(para) <= max_chars:
            out.append(para)
            continue
        for sentence in _SENTENCE.split(para):
            if len(sentence) <= max_chars:
                out.append(sentence)
                continue
            line = ""
            for word in sentence.split():
                while len(word) > max_chars:
                    if line:
                        out.append(line)
                        line = ""
                    out.append(word[:max_chars])
                    word = word[max_chars:]
                if line and len(line) + 1 + len(word) > max_chars:
                    out.append(line)
                    line = word
                else:
                    line = f"{line} {word}" if line else word
            if line:
                out.append(line)
    return out


def _bounded(text: str, max_chars: int) -> list[str]:
    """Pack the pieces greedily into chunks of at most max_chars."""
    chunks: list[str] = []
    current = ""
    for piece in _pieces(text, max_chars):
        joined = f"{current}\n\n{piece}" if current else piece
        if len(joined) <= max_chars:
            current = joined
        else:
            chunks.append(current)
            current = piece
    if current:
        chunks.append(current)
    return chunks
