"""Export a whole space: JSON that round-trips, a redacted view for sharing, a
Markdown document, and an Obsidian/Logseq-friendly mirror folder.

The JSON never carries primary keys. Rows are tied together by stable natural
keys instead (a session's external id, an entity's norm, an item's `uid` made
from what never changes about it), so the same export imports into any space,
and importing it twice finds what is already there.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from django.utils import timezone

from memory.models import (
    Belief,
    CoreBlock,
    Entity,
    EntityAlias,
    MemoryItem,
    Relation,
    Session,
    SessionSummary,
    Skill,
    Space,
    Turn,
)
from memory.screening import redact, redact_json
from memory.screening.redaction import KINDS
from memory.screening.rules import MARKER as REDACTED

FORMAT = "engram.space"
VERSION = 1
# Keys whose values are identifiers or digests, not text a person wrote:
# redaction leaves them alone so references inside an export still hold.
# (Entity norms are text: redacted alike wherever they occur, they still match.)
HASH_KEYS = frozenset({"uid", "superseded_by", "item", "evidence", "content_hash", "format"})


def _ts(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _digest(*parts: object) -> str:
    joined = "\x1f".join("" if p is None else str(p) for p in parts)
    return hashlib.sha256(joined.encode()).hexdigest()[:32]


def item_key(item: MemoryItem) -> str:
    """An item's identity across spaces: when it was learned and what it says."""
    return _digest(
        _ts(item.created_at), item.kind, item.text, item.subject, item.predicate, item.object
    )


def item_uids(items: Iterable[MemoryItem]) -> dict[int, str]:
    """uid per item pk. Two items identical in every keyed field (only possible
    for rows written in the same microsecond) are told apart by pk order."""
    uids: dict[int, str] = {}
    seen: dict[str, int] = {}
    for item in sorted(items, key=lambda i: i.pk):
        key = item_key(item)
        n = seen.get(key, 0)
        seen[key] = n + 1
        uids[item.pk] = key if n == 0 else f"{key}-{n}"
    return uids


def turn_key(
    *, session_external_id: str, ref: str | None, ts: str | None, role: str, text: str
) -> str:
    if ref is not None:
        return _digest("ref", session_external_id, ref)
    return _digest("turn", session_external_id, ts, role, text)


def relation_key(*, src: str, rel: str, dst: str, item: str | None, created_at: str | None) -> str:
    return _digest(src, rel, dst, item, created_at)


def _items(space: Space) -> tuple[list[dict[str, Any]], dict[int, str]]:
    items = list(MemoryItem.objects.filter(space=space).select_related("source_session"))
    uids = item_uids(items)
    out = []
    for item in sorted(items, key=lambda i: (i.created_at, uids[i.pk])):
        out.append(
            {
                "uid": uids[item.pk],
                "text": item.text,
                "kind": item.kind,
                "subject": item.subject,
                "predicate": item.predicate,
                "object": item.object,
                "importance": item.importance,
                "frequency": item.frequency,
                "last_seen": _ts(item.last_seen),
                "valid_from": _ts(item.valid_from),
                "valid_to": _ts(item.valid_to),
                "created_at": _ts(item.created_at),
                "expired_at": _ts(item.expired_at),
                "superseded_by": uids.get(item.superseded_by_id) if item.superseded_by_id else None,
                "status": item.status,
                "screen_status": item.screen_status,
                "screen_reasons": item.screen_reasons,
                "source": item.source,
                "source_session": item.source_session.external_id if item.source_session else None,
                "source_turn_refs": item.source_turn_refs,
                "disposition": item.disposition,
                "content_hash": item.content_hash,
                "metadata": item.metadata,
            }
        )
    return out, uids


def _core_blocks(space: Space) -> list[dict[str, Any]]:
    out = []
    for block in (
        CoreBlock.objects.filter(space=space).prefetch_related("versions").order_by("label")
    ):
        out.append(
            {
                "label": block.label,
                "text": block.text,
                "version": block.version,
                "budget_tokens": block.budget_tokens,
                "updated_at": _ts(block.updated_at),
                "versions": [
                    {
                        "version": v.version,
                        "text": v.text,
                        "author": v.author,
                        "reason": v.reason,
                        "created_at": _ts(v.created_at),
                    }
                    for v in sorted(block.versions.all(), key=lambda v: v.version)
                ],
            }
        )
    return out


def _sessions(space: Space) -> list[dict[str, Any]]:
    summaries = {s.session_id: s for s in SessionSummary.objects.filter(space=space)}
    turns: dict[int, list[Turn]] = {}
    for turn in Turn.objects.filter(space=space).order_by("ts", "id"):
        turns.setdefault(turn.session_id, []).append(turn)
    out = []
    for session in Session.objects.filter(space=space).order_by("started_at", "external_id"):
        summary = summaries.get(session.pk)
        out.append(
            {
                "external_id": session.external_id,
                "title": session.title,
                "started_at": _ts(session.started_at),
                "last_turn_at": _ts(session.last_turn_at),
                "metadata": session.metadata,
                "turns": [
                    {
                        "ref": t.ref,
                        "role": t.role,
                        "text": t.text,
                        "ts": _ts(t.ts),
                        "metadata": t.metadata,
                        "created_at": _ts(t.created_at),
                        "skip_reason": t.skip_reason,
                        "screen_status": t.screen_status,
                    }
                    for t in turns.get(session.pk, [])
                ],
                "summary": None
                if summary is None
                else {
                    "text": summary.text,
                    "turn_count": summary.turn_count,
                    "first_ts": _ts(summary.first_ts),
                    "last_ts": _ts(summary.last_ts),
                    "method": summary.method,
                    "created_at": _ts(summary.created_at),
                },
            }
        )
    return out


def _entities(space: Space) -> list[dict[str, Any]]:
    return [
        {
            "name": e.name,
            "norm": e.norm,
            "type": e.type,
            "summary": e.summary,
            "created_at": _ts(e.created_at),
            "last_mentioned_at": _ts(e.last_mentioned_at),
            "aliases": sorted(
                ({"alias": a.alias, "norm": a.norm} for a in e.aliases.all()),
                key=lambda a: a["norm"],
            ),
        }
        for e in Entity.objects.filter(space=space).prefetch_related("aliases").order_by("norm")
    ]


def _relations(space: Space, uids: dict[int, str]) -> list[dict[str, Any]]:
    out = []
    qs = Relation.objects.filter(space=space).select_related("src", "dst")
    for r in qs:
        out.append(
            {
                "src": r.src.norm,
                "rel": r.rel,
                "dst": r.dst.norm,
                "item": uids.get(r.item_id) if r.item_id else None,
                "valid_from": _ts(r.valid_from),
                "valid_to": _ts(r.valid_to),
                "created_at": _ts(r.created_at),
                "expired_at": _ts(r.expired_at),
            }
        )
    out.sort(key=lambda r: (r["created_at"] or "", r["src"], r["rel"], r["dst"], r["item"] or ""))
    return out


def _beliefs(space: Space, uids: dict[int, str]) -> list[dict[str, Any]]:
    out = []
    for b in Belief.objects.filter(space=space).prefetch_related("evidence"):
        out.append(
            {
                "text": b.text,
                "status": b.status,
                "evidence": sorted(uids[i.pk] for i in b.evidence.all()),
                "proof_count": b.proof_count,
                "history": b.history,
                "created_at": _ts(b.created_at),
                "updated_at": _ts(b.updated_at),
            }
        )
    out.sort(key=lambda b: (b["created_at"] or "", b["text"]))
    return out


def _skills(space: Space) -> list[dict[str, Any]]:
    return [
        {
            "name": s.name,
            "description": s.description,
            "body": s.body,
            "enabled": s.enabled,
            "is_draft": s.is_draft,
            "source": s.source,
            "evidence_turn_refs": s.evidence_turn_refs,
            "usage_count": s.usage_count,
            "last_used_at": _ts(s.last_used_at),
            "created_at": _ts(s.created_at),
            "updated_at": _ts(s.updated_at),
        }
        for s in Skill.objects.filter(space=space).order_by("name")
    ]


# The redacted view is for sharing: like the peer's, it shows a preview of
# each text, not the text, so what a rule missed is at most a fragment.
PREVIEW_CHARS = 40
_PREVIEW_KEYS = frozenset({"text", "body", "description", "summary", "reason"})
# Characters that continue the grapheme before them: combining marks,
# zero-width joiner, variation selectors, skin tones, emoji tag characters.
_CONTINUES = re.compile(
    r"[\u0300-\u036f\u200d\ufe00-\ufe0f\U0001f3fb-\U0001f3ff\U000e0020-\U000e007f]"
)


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """The first `limit` characters and an ellipsis, never cutting a
    [REDACTED:kind] marker or an emoji sequence in two."""
    if len(text) <= limit:
        return text
    cut = limit
    for m in REDACTED.finditer(text, 0, limit + 32):
        if m.start() < cut < m.end():
            cut = m.end()
    while cut < len(text) and (
        _CONTINUES.match(text, cut) or text[cut - 1] == "\u200d" or unicodedata.combining(text[cut])
    ):
        cut += 1
    if cut < len(text) and _regional(text[cut]) and _regional(text[cut - 1]):
        # A flag is two regional indicators: keep the pair together.
        cut += sum(1 for ch in text[:cut] if _regional(ch)) % 2
    return text[:cut].rstrip() + "…" if cut < len(text) else text


def _regional(ch: str) -> bool:
    return "\U0001f1e6" <= ch <= "\U0001f1ff"


def _preview_all(value: Any, key: str = "") -> Any:
    if isinstance(value, str):
        return preview(value) if key in _PREVIEW_KEYS else value
    if isinstance(value, dict):
        return {k: _preview_all(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_preview_all(v, key) for v in value]
    return value


def export_space(*, space: Space, redacted: bool = False) -> dict[str, Any]:
    """Everything a space knows, as JSON-able data. `redacted` is the view
    for sharing: every string redacted again (rows stored before a rule
    existed, kinds ENGRAM_REDACT left out: the view redacts every kind) and
    every text cut to a preview."""
    items, uids = _items(space)
    data: dict[str, Any] = {
        "space": {
            "name": space.name,
            "description": space.description,
            "created_at": _ts(space.created_at),
        },
        "core_blocks": _core_blocks(space),
        "sessions": _sessions(space),
        "items": items,
        "entities": _entities(space),
        "relations": _relations(space, uids),
        "beliefs": _beliefs(space, uids),
        "skills": _skills(space),
    }
    if redacted:
        data = _preview_all(redact_json(data, KINDS, keep_keys=HASH_KEYS))
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": _ts(timezone.now()),
        "redacted": redacted,
        **data,
    }


# --- Markdown -------------------------------------------------------------------------


def _window(item: dict[str, Any]) -> str:
    start = (item.get("valid_from") or "")[:10]
    end = (item.get("valid_to") or "")[:10]
    if start and end:
        return f" ({start} – {end})"
    if start:
        return f" (since {start})"
    return ""


def export_markdown(*, space: Space, redacted: bool = False) -> str:
    """One readable document: core memory, live facts by kind, entities,
    skills, beliefs and session summaries."""
    data = export_space(space=space, redacted=redacted)
    lines = [f"# {space.name}", ""]
    if space.description:
        lines += [space.description, ""]
    lines += [f"Exported {data['exported_at']}{' (redacted)' if redacted else ''}.", ""]
    lines.append("## Core memory")
    for block in data["core_blocks"]:
        lines += ["", f"### {block['label']} (v{block['version']})", "", block["text"] or "_empty_"]
    live = [
        i
        for i in data["items"]
        if i["expired_at"] is None and i["status"] == "active" and i["screen_status"] == "ok"
    ]
    lines += ["", f"## Facts ({len(live)} live)"]
    for kind in MemoryItem.Kind.values:
        rows = [i for i in live if i["kind"] == kind]
        if not rows:
            continue
        lines += ["", f"### {MemoryItem.Kind(kind).label}", ""]
        lines += [f"- {i['text']}{_window(i)}" for i in rows]
    if data["entities"]:
        lines += ["", "## Entities", ""]
        for e in data["entities"]:
            others = [a["alias"] for a in e["aliases"] if a["norm"] != e["norm"]]
            aka = f" (also: {', '.join(others)})" if others else ""
            lines.append(f"- **{e['name']}** — {e['type']}{aka}")
    if data["skills"]:
        lines += ["", "## Skills"]
        for s in data["skills"]:
            state = "enabled" if s["enabled"] else "disabled"
            lines += ["", f"### {s['name']} ({state})", "", s["description"], "", s["body"]]
    beliefs = [b for b in data["beliefs"] if b["status"] != "refuted"]
    if beliefs:
        lines += ["", "## Beliefs", ""]
        lines += [f"- {b['text']} ({b['proof_count']} proofs, {b['status']})" for b in beliefs]
    summaries = [s for s in data["sessions"] if s["summary"]]
    if summaries:
        lines += ["", "## Sessions", ""]
        for s in summaries:
            lines.append(
                f"- **{s['title'] or s['external_id']}** ({(s['started_at'] or '')[:10]}): {s['summary']['text']}"
            )
    return "\n".join(lines).rstrip() + "\n"


# --- Obsidian / Logseq mirror ---------------------------------------------------------

_UNSAFE = re.compile(r'[\\/:*?"<>|#^\[\]\n\r\t]+')
MARKER = "engram_uid"


def _filename(text: str, limit: int = 60) -> str:
    clean = _UNSAFE.sub(" ", text).strip().strip(".")
    clean = " ".join(clean.split())[:limit].rstrip()
    return clean or "untitled"


def _front_matter(meta: dict[str, Any]) -> str:
    body = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=False)
    return f"---\n{body}---\n"


def mirror_obsidian(*, space: Space, folder: Path, redacted: bool = False) -> dict[str, int]:
    """Write one Markdown file per live fact (YAML front matter, [[entity]]
    links) and one page per linked entity into `folder`. Files this mirror
    wrote earlier for facts that are no longer live are removed; files a
    person added are never touched."""
    from memory.services.graph import normalize

    text_of = redact if redacted else (lambda s: s)
    facts_dir, entities_dir = folder / "facts", folder / "entities"
    facts_dir.mkdir(parents=True, exist_ok=True)
    entities_dir.mkdir(parents=True, exist_ok=True)

    items = list(MemoryItem.objects.filter(space=space))
    uids = item_uids(items)
    live = [i for i in items if i.is_live]
    aliases: dict[str, Entity] = {
        alias.norm: alias.entity
        for alias in EntityAlias.objects.filter(space=space).select_related("entity")
    }
    for entity in Entity.objects.filter(space=space):
        aliases.setdefault(entity.norm, entity)
    by_item: dict[int, list[Entity]] = {}
    for rel in Relation.objects.filter(space=space, item__in=[i.pk for i in live]).select_related(
        "src", "dst"
    ):
        by_item.setdefault(rel.item_id or 0, []).extend([rel.src, rel.dst])

    written: set[str] = set()
    linked: dict[int, Entity] = {}
    for item in sorted(live, key=lambda i: (i.created_at, uids[i.pk])):
        entities = list(by_item.get(item.pk, []))
        for name in (item.subject, item.object):
            hit = aliases.get(normalize(name)) if name else None
            if hit is not None:
                entities.append(hit)
        unique = list({e.pk: e for e in entities}.values())
        for e in unique:
            linked[e.pk] = e
        uid = uids[item.pk]
        name = f"{_filename(text_of(item.text))} {uid[:8]}.md"
        meta = {
            MARKER: uid,
            "kind": item.kind,
            "subject": text_of(item.subject) or None,
            "predicate": item.predicate or None,
            "object": text_of(item.object) or None,
            "importance": item.importance,
            "source": item.source,
            "created": _ts(item.created_at),
            "valid_from": _ts(item.valid_from),
            "valid_to": _ts(item.valid_to),
            "entities": [e.name for e in unique],
            "tags": ["engram", f"engram/{item.kind}"],
        }
        body = text_of(item.text)
        if unique:
            body += "\n\n" + " ".join(f"[[{_filename(e.name)}]]" for e in unique)
        content = _front_matter(meta) + "\n" + body + "\n"
        path = facts_dir / name
        if not path.exists() or path.read_text(encoding="utf-8") != content:
            path.write_text(content, encoding="utf-8")
        written.add(name)

    removed = 0
    for path in facts_dir.glob("*.md"):
        if path.name in written:
            continue
        head = path.read_text(encoding="utf-8", errors="replace")[:400]
        if head.startswith("---\n") and f"\n{MARKER}:" in head:
            path.unlink()
            removed += 1

    pages = {f"{_filename(e.name)}.md" for e in linked.values()}
    for path in entities_dir.glob("*.md"):
        head = path.read_text(encoding="utf-8", errors="replace")[:400]
        if path.name not in pages and head.startswith("---\n") and f"\n{MARKER}: entity:" in head:
            path.unlink()
            removed += 1
    entity_pages = 0
    for entity in linked.values():
        others = sorted({a.alias for a in entity.aliases.all() if a.norm != entity.norm})
        meta = {MARKER: f"entity:{entity.norm}", "type": entity.type, "aliases": others}
        body = f"# {entity.name}\n\n{text_of(entity.summary)}".rstrip()
        (entities_dir / f"{_filename(entity.name)}.md").write_text(
            _front_matter(meta) + "\n" + body + "\n", encoding="utf-8"
        )
        entity_pages += 1
    return {"facts": len(written), "entities": entity_pages, "removed": removed}
