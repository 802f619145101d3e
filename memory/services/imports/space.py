"""Import a JSON space export (see memory.services.export) into a space.

Idempotent: every row is matched on the natural key the export carries
(session external id, turn ref, item uid, entity norm, skill name, ...), so
importing the same file twice, or an export of a space into itself, adds
nothing. No network work happens here, so the whole import is one transaction:
it lands completely or not at all.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

from django.db import transaction
from django.utils.dateparse import parse_datetime

from engram_site.bounds import instant_problem
from memory.errors import Invalid
from memory.models import (
    Belief,
    CoreBlock,
    CoreBlockVersion,
    Entity,
    EntityAlias,
    IngestJob,
    MemoryItem,
    Relation,
    Session,
    SessionSummary,
    Skill,
    Space,
    Turn,
)
from memory.screening import redact_json, screen, split_reasons
from memory.services import audit, outbox
from memory.services.export import FORMAT, HASH_KEYS, item_key, item_uids, relation_key, turn_key

SECTIONS = ("core_blocks", "sessions", "items", "entities", "relations", "beliefs", "skills")
# Turns per transaction when a background job imports an export in slices.
SLICE_TURNS = 500


@dataclass
class ImportReport:
    created: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "created": {k: v for k, v in self.created.items() if v},
            "skipped": {k: v for k, v in self.skipped.items() if v},
            "notes": self.notes,
        }


def _dt(value: Any, *, field_name: str) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        parsed = parse_datetime(str(value))
    except ValueError:  # well formed but impossible, e.g. month 13
        parsed = None
    if parsed is None:
        raise Invalid(f"{field_name}: not an ISO-8601 datetime: {value!r}")
    problem = instant_problem(parsed)
    if problem is not None:
        raise Invalid(f"{field_name}: {problem}")
    return parsed


def _req_dt(value: Any, *, field_name: str) -> datetime:
    parsed = _dt(value, field_name=field_name)
    if parsed is None:
        raise Invalid(f"{field_name}: required")
    return parsed


def _check(data: Any) -> None:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise Invalid(f"format: not an Engram space export (expected format {FORMAT!r})")
    if data.get("version") != 1:
        raise Invalid(f"version: unsupported export version {data.get('version')!r}")
    if data.get("redacted"):
        # A redacted view has lost text on purpose; restoring it would store
        # [REDACTED] placeholders as if they were memories.
        raise Invalid("redacted: a redacted export is for sharing and cannot be imported")
    for key in SECTIONS:
        rows = data.get(key, [])
        if not isinstance(rows, list):
            raise Invalid(f"{key}: must be a list")
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                raise Invalid(f"{key}[{i}]: must be an object")
    for i, session in enumerate(data.get("sessions", [])):
        turns = session.get("turns", [])
        if not isinstance(turns, list) or not all(isinstance(t, dict) for t in turns):
            raise Invalid(f"sessions[{i}].turns: must be a list of objects")


# The longest text one row may carry: what POST /turns takes for a turn.
MAX_TEXT = 64_000

# Per section: (required datetimes, optional datetimes, required strings, whole numbers, numbers).
_ROWS: dict[
    str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]
] = {
    "items": (
        ("last_seen", "created_at"),
        ("valid_from", "valid_to", "expired_at"),
        ("uid", "text"),
        ("frequency",),
        ("importance",),
    ),
    "entities": (("created_at", "last_mentioned_at"), (), ("norm",), (), ()),
    "relations": (("created_at",), ("valid_from", "valid_to", "expired_at"), (), (), ()),
    "beliefs": (("created_at", "updated_at"), (), (), ("proof_count",), ()),
    "skills": (("created_at", "updated_at"), ("last_used_at",), ("name",), ("usage_count",), ()),
    "core_blocks": (("updated_at",), (), (), ("version", "budget_tokens"), ()),
}
_TEXT_FIELDS = ("text", "description", "body", "summary", "title")


def _check_row(row: dict[str, Any], where: str, spec: tuple[tuple[str, ...], ...]) -> None:
    required_dt, optional_dt, required_str, whole, numbers = spec
    for name in required_str:
        if not str(row.get(name) or ""):
            raise Invalid(f"{where}.{name}: required")
    for name in required_dt:
        _req_dt(row.get(name), field_name=f"{where}.{name}")
    for name in optional_dt:
        _dt(row.get(name), field_name=f"{where}.{name}")
    for kind, names in ((int, whole), (float, numbers)):
        for name in names:
            value = row.get(name)
            if value is None:
                continue
            try:
                kind(value)
            except (TypeError, ValueError, OverflowError):
                raise Invalid(f"{where}.{name}: must be a number") from None
    for name in _TEXT_FIELDS:
        if len(str(row.get(name) or "")) > MAX_TEXT:
            raise Invalid(f"{where}.{name}: at most {MAX_TEXT} characters")


def validate(data: Any) -> None:
    """Every row of the export checked as importing it would check it, with
    no write: a background import runs in slices that commit one by one, so
    a bad row found halfway would leave the slices before it stored. Raises
    Invalid naming the row and field."""
    _check(data)
    for i, s in enumerate(data.get("sessions", [])):
        where = f"sessions[{i}]"
        if not str(s.get("external_id") or ""):
            raise Invalid(f"{where}.external_id: required")
        for name in ("started_at", "last_turn_at"):
            _req_dt(s.get(name), field_name=f"{where}.{name}")
        for j, t in enumerate(s.get("turns", [])):
            tw = f"{where}.turns[{j}]"
            if t.get("role") not in Turn.Role.values:
                raise Invalid(f"{tw}.role: must be user or assistant")
            if len(str(t.get("text", ""))) > MAX_TEXT:
                raise Invalid(f"{tw}.text: at most {MAX_TEXT} characters")
            for name in ("ts", "created_at"):
                _req_dt(t.get(name), field_name=f"{tw}.{name}")
        summary = s.get("summary")
        if summary:
            if not isinstance(summary, dict):
                raise Invalid(f"{where}.summary: must be an object")
            _check_row(
                summary,
                f"{where}.summary",
                (("created_at",), ("first_ts", "last_ts"), (), ("turn_count",), ()),
            )
    for key, spec in _ROWS.items():
        for i, row in enumerate(data.get(key, [])):
            _check_row(row, f"{key}[{i}]", spec)
    for i, b in enumerate(data.get("core_blocks", [])):
        if b.get("label") not in CoreBlock.Label.values:
            raise Invalid(f"core_blocks[{i}].label: must be user or agent")
        versions = b.get("versions", [])
        if not isinstance(versions, list) or not all(isinstance(v, dict) for v in versions):
            raise Invalid(f"core_blocks[{i}].versions: must be a list of objects")
        for j, v in enumerate(versions):
            _check_row(
                v, f"core_blocks[{i}].versions[{j}]", (("created_at",), (), (), ("version",), ())
            )
    norms = {str(e.get("norm") or "") for e in data.get("entities", [])}
    for i, r in enumerate(data.get("relations", [])):
        if r.get("src") not in norms or r.get("dst") not in norms:
            raise Invalid(f"relations[{i}]: src and dst must name exported entities")


def check_export(data: Any) -> None:
    """Refuse what is not an importable export as a whole, naming the row
    and field, before anything is written."""
    validate(data)


def row_count(data: dict[str, Any]) -> int:
    """Rows an import of `data` writes at most: its turns and section rows."""
    sessions = data.get("sessions")
    turns = sum(
        len(s["turns"])
        for s in (sessions if isinstance(sessions, list) else [])
        if isinstance(s, dict) and isinstance(s.get("turns"), list)
    )
    return turns + sum(len(data.get(k, [])) for k in SECTIONS if isinstance(data.get(k), list))


def slices(data: dict[str, Any], *, turns_per_slice: int | None = None) -> list[dict[str, Any]]:
    """`data` split into exports that import_space takes one at a time, each
    in a short transaction of its own: the sessions, at most
    `turns_per_slice` turns at a time, then everything else in one (items,
    entities, relations, beliefs, skills and core blocks refer to sessions
    and to each other, never to turns not yet written). Importing them in
    order stores what importing `data` at once would."""
    _check(data)
    turns_per_slice = turns_per_slice or SLICE_TURNS
    meta = {k: v for k, v in data.items() if k not in SECTIONS}
    out: list[dict[str, Any]] = []
    batch: list[dict[str, Any]] = []
    size = 0
    for session in data.get("sessions", []):
        turns = session.get("turns", [])
        # A long session is cut into parts; the later ones find it stored.
        parts = [turns[i : i + turns_per_slice] for i in range(0, len(turns), turns_per_slice)]
        for part in parts or [[]]:
            if batch and size + len(part) > turns_per_slice:
                out.append({**meta, "sessions": batch})
                batch, size = [], 0
            batch.append({**session, "turns": part})
            size += len(part)
    if batch:
        out.append({**meta, "sessions": batch})
    out.append({**meta, **{k: data.get(k, []) for k in SECTIONS if k != "sessions"}})
    return out


def _sessions(
    space: Space, data: dict[str, Any], report: ImportReport, jobs: list[int]
) -> dict[str, Session]:
    sessions = {s.external_id: s for s in Session.objects.filter(space=space)}
    for i, s in enumerate(data.get("sessions", [])):
        where = f"sessions[{i}]"
        ext = str(s.get("external_id") or "")
        if not ext:
            raise Invalid(f"{where}.external_id: required")
        session = sessions.get(ext)
        if session is None:
            session = Session.objects.create(
                space=space,
                external_id=ext[:200],
                title=str(s.get("title") or "")[:200],
                started_at=_req_dt(s.get("started_at"), field_name=f"{where}.started_at"),
                last_turn_at=_req_dt(s.get("last_turn_at"), field_name=f"{where}.last_turn_at"),
                metadata=s.get("metadata") or {},
            )
            sessions[ext] = session
            report.created["sessions"] += 1
        else:
            report.skipped["sessions"] += 1
        existing = {
            turn_key(
                session_external_id=ext, ref=t.ref, ts=t.ts.isoformat(), role=t.role, text=t.text
            )
            for t in Turn.objects.filter(space=space, session=session)
        }
        new_turns = []
        # The split check of live turns (services.turns): each turn is read
        # with the previous one of its session and role, imported or stored,
        # so a payload cut over two turns is quarantined as it would be live.
        last: dict[str, tuple[Turn | None, int | None, str] | None] = {}
        split_stored: set[int] = set()  # stored first halves to quarantine
        for j, t in enumerate(s.get("turns", [])):
            tw = f"{where}.turns[{j}]"
            if t.get("role") not in Turn.Role.values:
                raise Invalid(f"{tw}.role: must be user or assistant")
            key = turn_key(
                session_external_id=ext,
                ref=t.get("ref"),
                ts=t.get("ts"),
                role=t["role"],
                text=t.get("text", ""),
            )
            if key in existing:
                report.skipped["turns"] += 1
                continue
            existing.add(key)
            role, text = t["role"], str(t.get("text", ""))
            status = t.get("screen_status") or "ok"
            if status == "ok" and screen(text).flagged:
                status = "flagged"
            if role not in last:
                stored = (
                    Turn.objects.filter(space=space, session=session, role=role)
                    .order_by("-ts", "-id")
                    .values_list("pk", "text", "screen_status")
                    .first()
                )
                last[role] = (None, stored[0], stored[1]) if stored and stored[2] == "ok" else None
            previous = last[role]
            if status == "ok" and previous is not None and split_reasons(previous[2], text):
                status = "flagged"
                if previous[0] is not None:
                    previous[0].screen_status = "flagged"
                elif previous[1] is not None:
                    split_stored.add(previous[1])
            turn = Turn(
                space=space,
                session=session,
                ref=t.get("ref"),
                role=role,
                text=text,
                ts=_req_dt(t.get("ts"), field_name=f"{tw}.ts"),
                metadata=t.get("metadata") or {},
                created_at=_req_dt(t.get("created_at"), field_name=f"{tw}.created_at"),
                # Processed turns keep their verdict: running the pipeline
                # over them again would re-extract facts the export carries.
                skip_reason=t.get("skip_reason"),
                screen_status=status,
            )
            last[role] = (turn, None, text) if status == "ok" else None
            new_turns.append(turn)
        if split_stored:
            Turn.objects.filter(pk__in=split_stored).update(screen_status="flagged")
        for turn in new_turns:
            turn.save()
            if turn.skip_reason is None:
                # Not yet through the pipeline where it came from: queue it here.
                jobs.append(
                    IngestJob.objects.create(
                        space=space, turn=turn, kind="turn", idempotency_key=f"turn:{turn.pk}"
                    ).pk
                )
        report.created["turns"] += len(new_turns)
        summary = s.get("summary")
        if summary and not SessionSummary.objects.filter(session=session).exists():
            SessionSummary.objects.create(
                space=space,
                session=session,
                text=str(summary.get("text", "")),
                turn_count=int(summary.get("turn_count") or 0),
                first_ts=_dt(summary.get("first_ts"), field_name=f"{where}.summary.first_ts"),
                last_ts=_dt(summary.get("last_ts"), field_name=f"{where}.summary.last_ts"),
                method=str(summary.get("method") or "extractive")[:20],
                created_at=_req_dt(
                    summary.get("created_at"), field_name=f"{where}.summary.created_at"
                ),
            )
            report.created["summaries"] += 1
        elif summary:
            report.skipped["summaries"] += 1
    return sessions


def _redacted_uid(it: dict[str, Any], where: str) -> str:
    created = _dt(it.get("created_at"), field_name=f"{where}.created_at")
    if created is None:
        return ""  # not importable anyway: the item's own checks name the field
    probe = MemoryItem(
        created_at=created.astimezone(UTC),
        kind=it.get("kind") or MemoryItem.Kind.FACT,
        text=str(it.get("text") or ""),
        subject=str(it.get("subject") or "")[:200],
        predicate=str(it.get("predicate") or "")[:100],
        object=str(it.get("object") or "")[:500],
    )
    return item_key(probe)


def _items(
    space: Space, data: dict[str, Any], sessions: dict[str, Session], report: ImportReport
) -> dict[str, MemoryItem]:
    existing = list(MemoryItem.objects.filter(space=space))
    uids = item_uids(existing)
    by_uid = {uids[item.pk]: item for item in existing}
    created: list[tuple[MemoryItem, str | None]] = []
    for i, it in enumerate(data.get("items", [])):
        where = f"items[{i}]"
        uid = str(it.get("uid") or "")
        if not uid:
            raise Invalid(f"{where}.uid: required")
        text = str(it.get("text") or "")
        # The file's uid was made from the text before redaction: an item
        # imported before is found by the uid its stored, redacted text has.
        known = by_uid.get(uid) or by_uid.get(_redacted_uid(it, where))
        if known is not None:
            by_uid.setdefault(uid, known)
            report.skipped["items"] += 1
            continue
        if not text:
            raise Invalid(f"{where}.text: required")
        screen_status = it.get("screen_status") or MemoryItem.Screen.OK
        reasons = list(it.get("screen_reasons") or [])
        if screen_status == MemoryItem.Screen.OK:
            verdict = screen(text)
            if verdict.flagged:
                screen_status, reasons = MemoryItem.Screen.FLAGGED, verdict.reasons
        session_ext = it.get("source_session")
        item = MemoryItem.objects.create(
            space=space,
            text=text,
            kind=it.get("kind") or MemoryItem.Kind.FACT,
            subject=str(it.get("subject") or "")[:200],
            predicate=str(it.get("predicate") or "")[:100],
            object=str(it.get("object") or "")[:500],
            importance=float(it.get("importance", 0.5)),
            frequency=int(it.get("frequency", 1)),
            last_seen=_req_dt(it.get("last_seen"), field_name=f"{where}.last_seen"),
            valid_from=_dt(it.get("valid_from"), field_name=f"{where}.valid_from"),
            valid_to=_dt(it.get("valid_to"), field_name=f"{where}.valid_to"),
            created_at=_req_dt(it.get("created_at"), field_name=f"{where}.created_at"),
            expired_at=_dt(it.get("expired_at"), field_name=f"{where}.expired_at"),
            status=it.get("status") or MemoryItem.Status.ACTIVE,
            screen_status=screen_status,
            screen_reasons=reasons,
            source=str(it.get("source") or "import")[:60],
            source_session=sessions.get(session_ext) if session_ext else None,
            source_turn_refs=it.get("source_turn_refs") or [],
            disposition=str(it.get("disposition") or "")[:10],
            content_hash=str(it.get("content_hash") or "")[:64],
            metadata=it.get("metadata") or {},
        )
        by_uid[uid] = item
        created.append((item, it.get("superseded_by")))
    # Supersede chains point forward in time, so links are set once every
    # item of the file exists.
    for item, successor in created:
        if successor and successor in by_uid:
            MemoryItem.objects.filter(pk=item.pk).update(superseded_by=by_uid[successor])
    report.created["items"] += len(created)
    return by_uid


def _entities(space: Space, data: dict[str, Any], report: ImportReport) -> dict[str, Entity]:
    by_norm = {e.norm: e for e in Entity.objects.filter(space=space)}
    taken = set(EntityAlias.objects.filter(space=space).values_list("norm", flat=True))
    for i, e in enumerate(data.get("entities", [])):
        norm = str(e.get("norm") or "")
        if not norm:
            raise Invalid(f"entities[{i}].norm: required")
        entity = by_norm.get(norm)
        if entity is None:
            entity = Entity.objects.create(
                space=space,
                name=str(e.get("name") or norm)[:200],
                norm=norm[:200],
                type=e.get("type") if e.get("type") in Entity.Type.values else Entity.Type.THING,
                summary=str(e.get("summary") or ""),
                created_at=_req_dt(e.get("created_at"), field_name=f"entities[{i}].created_at"),
                last_mentioned_at=_req_dt(
                    e.get("last_mentioned_at"), field_name=f"entities[{i}].last_mentioned_at"
                ),
            )
            by_norm[norm] = entity
            report.created["entities"] += 1
        else:
            report.skipped["entities"] += 1
        for alias in e.get("aliases", []):
            a_norm = str(alias.get("norm") or "")
            if a_norm and a_norm not in taken:
                EntityAlias.objects.create(
                    space=space,
                    entity=entity,
                    alias=str(alias.get("alias") or a_norm)[:200],
                    norm=a_norm[:200],
                )
                taken.add(a_norm)
                report.created["aliases"] += 1
    return by_norm


def _relations(
    space: Space,
    data: dict[str, Any],
    entities: dict[str, Entity],
    items: dict[str, MemoryItem],
    report: ImportReport,
) -> None:
    pk_uid = {item.pk: uid for uid, item in items.items()}
    existing = {
        relation_key(
            src=r.src.norm,
            rel=r.rel,
            dst=r.dst.norm,
            item=pk_uid.get(r.item_id) if r.item_id else None,
            created_at=r.created_at.isoformat(),
        )
        for r in Relation.objects.filter(space=space).select_related("src", "dst")
    }
    new = []
    for i, r in enumerate(data.get("relations", [])):
        src, dst = entities.get(r.get("src")), entities.get(r.get("dst"))
        if src is None or dst is None:
            raise Invalid(f"relations[{i}]: src and dst must name exported entities")
        key = relation_key(
            src=r["src"],
            rel=r.get("rel", ""),
            dst=r["dst"],
            item=r.get("item"),
            created_at=r.get("created_at"),
        )
        if key in existing:
            report.skipped["relations"] += 1
            continue
        existing.add(key)
        new.append(
            Relation(
                space=space,
                src=src,
                rel=str(r.get("rel") or "")[:100],
                dst=dst,
                item=items.get(r["item"]) if r.get("item") else None,
                valid_from=_dt(r.get("valid_from"), field_name=f"relations[{i}].valid_from"),
                valid_to=_dt(r.get("valid_to"), field_name=f"relations[{i}].valid_to"),
                created_at=_req_dt(r.get("created_at"), field_name=f"relations[{i}].created_at"),
                expired_at=_dt(r.get("expired_at"), field_name=f"relations[{i}].expired_at"),
            )
        )
    Relation.objects.bulk_create(new)
    report.created["relations"] += len(new)


def _beliefs(
    space: Space, data: dict[str, Any], items: dict[str, MemoryItem], report: ImportReport
) -> None:
    existing = {(b.text, b.created_at.isoformat()) for b in Belief.objects.filter(space=space)}
    for i, b in enumerate(data.get("beliefs", [])):
        created_at = _req_dt(b.get("created_at"), field_name=f"beliefs[{i}].created_at")
        if (b.get("text"), b.get("created_at")) in existing:
            report.skipped["beliefs"] += 1
            continue
        belief = Belief.objects.create(
            space=space,
            text=str(b.get("text") or ""),
            status=b.get("status") or Belief.Status.ACTIVE,
            proof_count=int(b.get("proof_count") or 0),
            history=b.get("history") or [],
            created_at=created_at,
            updated_at=_req_dt(b.get("updated_at"), field_name=f"beliefs[{i}].updated_at"),
        )
        belief.evidence.set([items[u] for u in b.get("evidence", []) if u in items])
        report.created["beliefs"] += 1


def _skills(space: Space, data: dict[str, Any], report: ImportReport) -> None:
    names = set(Skill.objects.filter(space=space).values_list("name", flat=True))
    for i, s in enumerate(data.get("skills", [])):
        name = str(s.get("name") or "")
        if not name:
            raise Invalid(f"skills[{i}].name: required")
        if name in names:
            report.skipped["skills"] += 1
            continue
        Skill.objects.create(
            space=space,
            name=name[:120],
            description=str(s.get("description") or ""),
            body=str(s.get("body") or ""),
            enabled=bool(s.get("enabled")),
            is_draft=bool(s.get("is_draft", True)),
            source=str(s.get("source") or "import")[:60],
            evidence_turn_refs=s.get("evidence_turn_refs") or [],
            usage_count=int(s.get("usage_count") or 0),
            last_used_at=_dt(s.get("last_used_at"), field_name=f"skills[{i}].last_used_at"),
            created_at=_req_dt(s.get("created_at"), field_name=f"skills[{i}].created_at"),
            updated_at=_req_dt(s.get("updated_at"), field_name=f"skills[{i}].updated_at"),
        )
        names.add(name)
        report.created["skills"] += 1


def _core_blocks(space: Space, data: dict[str, Any], report: ImportReport) -> list[int]:
    """A block is imported with its whole history only into a block that has
    none yet; two histories cannot be interleaved without rewriting one."""
    touched: list[int] = []
    for i, b in enumerate(data.get("core_blocks", [])):
        label = b.get("label")
        if label not in CoreBlock.Label.values:
            raise Invalid(f"core_blocks[{i}].label: must be user or agent")
        block = CoreBlock.objects.filter(space=space, label=label).first()
        if block is not None and (block.version > 0 or block.versions.exists()):
            report.skipped["core_blocks"] += 1
            if block.text != b.get("text"):
                report.notes.append(f"core block {label!r} already has its own history; kept it")
            continue
        values = {
            "text": str(b.get("text") or ""),
            "version": int(b.get("version") or 0),
            "budget_tokens": int(b.get("budget_tokens") or 0)
            or (block.budget_tokens if block else 500),
            "updated_at": _req_dt(b.get("updated_at"), field_name=f"core_blocks[{i}].updated_at"),
        }
        if block is None:
            block = CoreBlock.objects.create(space=space, label=label, **values)
        else:
            CoreBlock.objects.filter(pk=block.pk).update(**values)
        CoreBlockVersion.objects.bulk_create(
            [
                CoreBlockVersion(
                    block=block,
                    version=int(v["version"]),
                    text=str(v.get("text") or ""),
                    author=str(v.get("author") or "import")[:40],
                    reason=str(v.get("reason") or "")[:200],
                    created_at=_req_dt(
                        v.get("created_at"), field_name=f"core_blocks[{i}].versions.created_at"
                    ),
                )
                for v in b.get("versions", [])
            ]
        )
        report.created["core_blocks"] += 1
        touched.append(block.pk)
    return touched


def import_space(
    *, space: Space, data: dict[str, Any], actor: str = "import", record_audit: bool = True
) -> ImportReport:
    """Import a JSON space export into `space`. Bad data raises Invalid
    naming the field; nothing is written then. An import job importing
    slices records one audit event for them all (`record_audit=False`)."""
    from memory.services import mirror
    from memory.services.palace import slots as palace_slots

    # Every row checked first, its size caps before any screening (screening
    # costs ~30 µs a character on letter-heavy text).
    validate(data)
    # An export from elsewhere (or from before redaction covered a kind) may
    # hold secrets; they are redacted like any other write. Identifiers and
    # digests are kept so the file's references still hold, and redaction is
    # deterministic, so entity norms and the relations naming them still agree.
    data = redact_json(data, keep_keys=HASH_KEYS)
    report = ImportReport()
    with transaction.atomic():
        jobs: list[int] = []
        sessions = _sessions(space, data, report, jobs)
        items = _items(space, data, sessions, report)
        entities = _entities(space, data, report)
        _relations(space, data, entities, items, report)
        _beliefs(space, data, items, report)
        _skills(space, data, report)
        blocks = _core_blocks(space, data, report)
        # Items and skills imported here get their palace places on the
        # palace's next read, or in the background if there are many.
        palace_slots.mark_backlog(space.pk)
        if record_audit:
            audit.record(
                space=space,
                action="import",
                target_type="space",
                target_id=space.pk,
                actor=actor[:60],
                kind="json",
                source_space=str((data.get("space") or {}).get("name", ""))[:64],
                **report.as_dict(),
            )
        if jobs:
            outbox.enqueue_on_commit(jobs)
        for block_id in blocks:
            transaction.on_commit(partial(mirror.write_block, block_id=block_id))
    return report
