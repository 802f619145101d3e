"""The dashboard's translation catalogues, checked without gettext tools.

`manage.py makemessages` needs GNU gettext; a test and a fresh machine may not
have it. So this module reads .po files itself, extracts the msgids of the
project's sources the way makemessages does (templates through Django's own
`templatize`, Python through `ast`), and compares catalogues, sources and
compiled .mo files. `manage.py i18n_check` and tests/ui/test_i18n.py use it."""

from __future__ import annotations

import ast
import gettext
import io
import re
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

# The catalogues besides English, whose strings are the msgids themselves.
LANGUAGES = ("zh_Hans", "ru")
# What makemessages scans: the project's own code and templates only.
SOURCE_DIRS = ("engram_site", "memory", "environment", "consolidation", "templates")
GETTEXT_NAMES = {
    "_": "gettext",
    "gettext": "gettext",
    "gettext_lazy": "gettext",
    "gettext_noop": "gettext",
    "ngettext": "ngettext",
    "ngettext_lazy": "ngettext",
    "pgettext": "pgettext",
    "pgettext_lazy": "pgettext",
    "npgettext": "npgettext",
    "npgettext_lazy": "npgettext",
}
# %(name)s and friends, and %% — what Python's % operator reads.
PLACEHOLDER = re.compile(r"%(?:\((\w+)\))?[#0 +-]*\d*(?:\.\d+)?[sdifrxXeEgGc%]")
HTML_TAG = re.compile(r"</?[a-zA-Z][^>]*>")

Key = tuple[str | None, str]  # (msgctxt, msgid)


@dataclass
class Entry:
    msgid: str
    context: str | None = None
    plural: str | None = None
    strings: dict[int, str] = field(default_factory=dict)
    fuzzy: bool = False
    obsolete: bool = False

    @property
    def key(self) -> Key:
        return (self.context, self.msgid)

    @property
    def translated(self) -> bool:
        return bool(self.strings) and all(self.strings.values()) and not self.fuzzy


def _unquote(text: str) -> str:
    value: str = ast.literal_eval(text)
    return value


def parse_po(path: Path) -> list[Entry]:
    """The entries of a .po file, the header (msgid "") left out."""
    entries: list[Entry] = []
    current: Entry | None = None
    target: tuple[str, int] | None = None
    fuzzy = False

    def finish() -> None:
        nonlocal current
        if current is not None and current.msgid:
            entries.append(current)
        current = None

    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line:
            finish()
            fuzzy = False
            target = None
            continue
        if line.startswith("#~"):
            continue  # obsolete entries are not part of the catalogue
        if line.startswith("#,"):
            fuzzy = fuzzy or "fuzzy" in line
            continue
        if line.startswith("#"):
            continue
        keyword, _, rest = line.partition(" ")
        if line.startswith('"'):
            if current is None or target is None:
                continue
            name, index = target
            if name == "msgid":
                current.msgid += _unquote(line)
            elif name == "msgctxt":
                current.context = (current.context or "") + _unquote(line)
            elif name == "msgid_plural":
                current.plural = (current.plural or "") + _unquote(line)
            else:
                current.strings[index] += _unquote(line)
            continue
        if keyword == "msgctxt":
            finish()
            current = Entry(msgid="", context=_unquote(rest), fuzzy=fuzzy)
            target = ("msgctxt", 0)
        elif keyword == "msgid":
            if current is None or current.msgid or target != ("msgctxt", 0):
                finish()
                current = Entry(msgid="", fuzzy=fuzzy)
            current.msgid = _unquote(rest)
            target = ("msgid", 0)
        elif keyword == "msgid_plural" and current is not None:
            current.plural = _unquote(rest)
            target = ("msgid_plural", 0)
        elif keyword.startswith("msgstr") and current is not None:
            index = int(keyword[7:-1]) if keyword.startswith("msgstr[") else 0
            current.strings[index] = _unquote(rest)
            target = ("msgstr", index)
    finish()
    return entries


def catalogue_path(language: str) -> Path:
    return Path(settings.BASE_DIR) / "locale" / language / "LC_MESSAGES" / "django.po"


def _calls(tokens: Iterable[tokenize.TokenInfo]) -> Iterator[tuple[str, list[str]]]:
    """(kind, leading string arguments) of each gettext call in a token stream."""
    items = [t for t in tokens if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT)]
    for i, tok in enumerate(items):
        if tok.type != tokenize.NAME or tok.string not in GETTEXT_NAMES:
            continue
        if i + 1 >= len(items) or items[i + 1].string != "(":
            continue
        args: list[str] = []
        j = i + 2
        while j < len(items) and items[j].type == tokenize.STRING:
            text = _unquote(items[j].string)
            while j + 1 < len(items) and items[j + 1].type == tokenize.STRING:
                j += 1  # implicit concatenation
                text += _unquote(items[j].string)
            args.append(text)
            j += 1
            if j < len(items) and items[j].string == ",":
                j += 1
        yield GETTEXT_NAMES[tok.string], args


def _keys(kind: str, args: list[str]) -> Iterator[tuple[Key, str | None]]:
    if kind == "gettext" and args:
        yield (None, args[0]), None
    elif kind == "ngettext" and len(args) >= 2:
        yield (None, args[0]), args[1]
    elif kind == "pgettext" and len(args) >= 2:
        yield (args[0], args[1]), None
    elif kind == "npgettext" and len(args) >= 3:
        yield (args[0], args[1]), args[2]


def _python_calls(source: str) -> Iterator[tuple[str, list[str]]]:
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if name not in GETTEXT_NAMES:
            continue
        args: list[str] = []
        for arg in node.args:
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                break
            args.append(arg.value)
        yield GETTEXT_NAMES[name], args


def source_msgids(base: Path | None = None) -> dict[Key, str | None]:
    """Every (msgctxt, msgid) the project's sources ask for, with its plural."""
    from django.utils.translation.template import templatize

    base = base or Path(settings.BASE_DIR)
    found: dict[Key, str | None] = {}
    for top in SOURCE_DIRS:
        for path in sorted((base / top).rglob("*")):
            if "migrations" in path.parts or "static" in path.parts:
                continue
            if path.suffix == ".py":
                calls = _python_calls(path.read_text(encoding="utf-8"))
            elif path.suffix in (".html", ".txt"):
                code = templatize(path.read_text(encoding="utf-8"), origin=str(path))
                calls = _calls(tokenize.generate_tokens(io.StringIO(code).readline))
            else:
                continue
            for kind, args in calls:
                for key, plural in _keys(kind, args):
                    found[key] = plural
    return found


def placeholders(text: str) -> list[str]:
    """The %-placeholders of a string, sorted (named ones by name)."""
    return sorted(m.group(0) for m in PLACEHOLDER.finditer(text))


def html_tags(text: str) -> list[str]:
    return sorted(HTML_TAG.findall(text))


def problems(language: str, sources: dict[Key, str | None] | None = None) -> list[str]:
    """What is wrong with a language's catalogue, one line each: msgids the
    sources ask for that it lacks, entries untranslated or fuzzy, translations
    whose placeholders or HTML differ from the msgid's, a stale .mo."""
    path = catalogue_path(language)
    if not path.exists():
        return [f"{language}: no catalogue at {path}"]
    entries = parse_po(path)
    by_key = {e.key: e for e in entries}
    out: list[str] = []

    def name(key: Key) -> str:
        return f"{key[1]!r}" + (f" (context {key[0]!r})" if key[0] else "")

    for key in sorted(sources or {}, key=lambda k: (k[0] or "", k[1])):
        if key not in by_key:
            out.append(f"{language}: missing from the catalogue: {name(key)}")
    for e in entries:
        if e.fuzzy:
            out.append(f"{language}: fuzzy: {name(e.key)}")
        elif not e.translated:
            out.append(f"{language}: untranslated: {name(e.key)}")
        for index, text in e.strings.items():
            if not text:
                continue
            original = e.msgid if index == 0 or e.plural is None else e.plural
            # Chinese has one form, made from the plural msgid; either form's
            # placeholders are the same in our catalogues.
            if placeholders(text) != placeholders(original) and placeholders(text) != placeholders(
                e.msgid
            ):
                out.append(
                    f"{language}: placeholders {placeholders(text)} in the translation of "
                    f"{name(e.key)} differ from {placeholders(original)}"
                )
            if html_tags(text) != html_tags(original):
                out.append(f"{language}: HTML tags differ in the translation of {name(e.key)}")
    out.extend(stale_mo(language, entries))
    return out


def stale_mo(language: str, entries: list[Entry] | None = None) -> list[str]:
    """The differences between a compiled .mo and its .po (both directions)."""
    po = catalogue_path(language)
    mo = po.with_suffix(".mo")
    if not mo.exists():
        return [f"{language}: no compiled catalogue at {mo}; run compilemessages"]
    with mo.open("rb") as handle:
        compiled: dict[object, str] = dict(gettext.GNUTranslations(handle)._catalog)  # type: ignore[attr-defined]
    compiled.pop("", None)
    expected: dict[object, str] = {}
    for e in entries if entries is not None else parse_po(po):
        if not e.translated:
            continue
        msgid = f"{e.context}\x04{e.msgid}" if e.context else e.msgid
        if e.plural is None:
            expected[msgid] = e.strings[0]
        else:
            for index, text in e.strings.items():
                expected[(msgid, index)] = text
    if compiled != expected:
        return [f"{language}: {mo.name} is stale; run compilemessages"]
    return []
