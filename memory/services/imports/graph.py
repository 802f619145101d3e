"""Import a `{nodes, edges}` knowledge-graph dump, as Cognee and similar tools
write it: nodes become entities (plus a fact when the node has a
description), edges become relations plus a fact "A rel B". Every fact is
screened and carries source='import:cognee'. Idempotent: a fact already
imported with the same wording is found by its content hash, an edge by its
(src, rel, dst)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from memory.errors import Invalid
from memory.models import Entity, MemoryItem, Relation, Space
from memory.screening import redact_json, screen
from memory.services import audit, graph
from memory.services.imports.chunks import CHUNK, pause_between_chunks
from memory.services.pipeline.candidates import content_hash

SOURCE = "import:cognee"
_NODE_NAME = ("name", "label", "title", "id")
_NODE_DESC = ("description", "summary", "text", "content")
_EDGE_SRC = ("source", "src", "from", "source_node_id", "source_id")
_EDGE_DST = ("target", "dst", "to", "target_node_id", "target_id")
_EDGE_REL = ("relation", "relationship_name", "rel", "label", "type", "relationship")
# Cognee's node types, mapped onto Engram's entity types.
_TYPES = {
    "person": Entity.Type.PERSON,
    "people": Entity.Type.PERSON,
    "place": Entity.Type.PLACE,
    "location": Entity.Type.PLACE,
    "organization": Entity.Type.ORG,
    "organisation": Entity.Type.ORG,
    "company": Entity.Type.ORG,
    "org": Entity.Type.ORG,
    "project": Entity.Type.PROJECT,
    "tool": Entity.Type.TOOL,
    "software": Entity.Type.TOOL,
    "concept": Entity.Type.CONCEPT,
    "topic": Entity.Type.CONCEPT,
}
MAX_NODES = 50_000
MAX_EDGES = 200_000


class _DryRun(Exception):
    pass


@dataclass
class GraphImportReport:
    dry_run: bool = False
    counts: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run, **dict(self.counts)}


@dataclass
class _Seen:
    """What the earlier chunks of a dry run would have written: each chunk
    is rolled back, so the database cannot tell the next one."""

    entities: set[str] = field(default_factory=set)
    facts: set[str] = field(default_factory=set)
    relations: set[tuple[str, str, str]] = field(default_factory=set)


Progress = Callable[[int, int, GraphImportReport], None]


def _first(obj: dict[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = obj.get(key)
        if isinstance(value, str | int) and str(value).strip():
            return " ".join(str(value).split())
    return ""


def _rel_words(rel: str) -> str:
    return " ".join(rel.replace("_", " ").replace("-", " ").split())


def _fact(
    *,
    space: Space,
    text: str,
    subject: str,
    predicate: str,
    obj: str,
    report: GraphImportReport,
    seen: _Seen,
) -> MemoryItem:
    verdict = screen(text)
    digest = content_hash(verdict.text)
    existing = MemoryItem.objects.filter(space=space, source=SOURCE, content_hash=digest).first()
    if existing is not None:
        report.counts["facts_existing"] += 1
        return existing
    item = MemoryItem.objects.create(
        space=space,
        text=verdict.text,
        kind=MemoryItem.Kind.FACT,
        subject=subject[:200],
        predicate=predicate[:100],
        object=obj[:500],
        source=SOURCE,
        disposition="ADD",
        screen_status=MemoryItem.Screen.FLAGGED if verdict.flagged else MemoryItem.Screen.OK,
        screen_reasons=verdict.reasons,
        content_hash=digest,
    )
    if digest in seen.facts:
        report.counts["facts_existing"] += 1  # "added" by an earlier dry-run chunk
        return item
    seen.facts.add(digest)
    report.counts["facts_quarantined" if verdict.flagged else "facts_added"] += 1
    audit.record(
        space=space,
        action="add",
        target_type="item",
        target_id=item.pk,
        actor=SOURCE,
        reason="graph import",
    )
    return item


def _entity(
    *, space: Space, name: str, type_: str, report: GraphImportReport, seen: _Seen
) -> Entity | None:
    if screen(name).flagged or not graph.normalize(name):
        report.counts["nodes_refused"] += 1
        return None
    before = Entity.objects.filter(space=space).count()
    entity = graph.upsert_entity(space=space, name=name, type=type_)
    added = Entity.objects.filter(space=space).count() > before and entity.norm not in seen.entities
    seen.entities.add(entity.norm)
    report.counts["entities_added" if added else "entities_existing"] += 1
    return entity


def _validate(dump: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    if not isinstance(dump, dict):
        raise Invalid("body: expected an object with nodes and edges")
    nodes, edges = dump.get("nodes", []), dump.get("edges", dump.get("links", []))
    if not isinstance(nodes, list) or not all(isinstance(n, dict) for n in nodes):
        raise Invalid("nodes: must be a list of objects")
    if not isinstance(edges, list) or not all(isinstance(e, dict) for e in edges):
        raise Invalid("edges: must be a list of objects")
    if len(nodes) > MAX_NODES or len(edges) > MAX_EDGES:
        raise Invalid(f"nodes/edges: at most {MAX_NODES} nodes and {MAX_EDGES} edges per import")
    return nodes, edges


def _check_rows(nodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> None:
    """Refuse a dump with a bad row before anything is written: chunks
    commit one by one, so a bad row found halfway would leave half an import."""
    for i, node in enumerate(nodes):
        if not _first(node, _NODE_NAME):
            raise Invalid(f"nodes[{i}]: needs a name, label or id")
    for i, edge in enumerate(edges):
        if (
            not _first(edge, _EDGE_SRC)
            or not _first(edge, _EDGE_DST)
            or not _first(edge, _EDGE_REL)
        ):
            raise Invalid(f"edges[{i}]: needs source, target and relation")


def check_dump(dump: Any) -> tuple[int, int]:
    """Validate a dump without writing; (nodes, edges)."""

    nodes, edges = _validate(dump)
    _check_rows(nodes, edges)
    return len(nodes), len(edges)


class _Importer:
    def __init__(self, *, space: Space, nodes: list[dict[str, Any]], report: GraphImportReport):
        self.space, self.report, self.seen = space, report, _Seen()
        self.names: dict[str, str] = {}
        self.node_ids: set[str] = set()
        for node in nodes:
            name = _first(node, _NODE_NAME)
            node_id = _first(node, ("id",)) or name
            self.names[node_id] = name
            if graph.normalize(name):
                self.node_ids.add(node_id)
        # Entities met in this run. A dry run forgets them after each chunk,
        # whose rows are rolled back.
        self.entities: dict[str, Entity] = {}

    def node(self, node: dict[str, Any]) -> None:
        space, report = self.space, self.report
        name = _first(node, _NODE_NAME)
        node_id = _first(node, ("id",)) or name
        type_ = _TYPES.get(_first(node, ("type",)).lower(), Entity.Type.THING)
        entity = _entity(space=space, name=name, type_=type_, report=report, seen=self.seen)
        if entity is None:
            self.node_ids.discard(node_id)
            return
        self.entities[node_id] = entity
        description = _first(node, _NODE_DESC)
        if description and description != name:
            _fact(
                space=space,
                text=f"{name}: {description}",
                subject=name,
                predicate="is",
                obj=description,
                report=report,
                seen=self.seen,
            )

    def _endpoint(self, node_id: str, name: str) -> Entity | None:
        if node_id in self.entities:
            return self.entities[node_id]
        if node_id in self.node_ids:
            # A node of this dump written by an earlier chunk (or run):
            # found again, not counted again.
            entity = graph.upsert_entity(space=self.space, name=name, type="thing")
            self.entities[node_id] = entity
            return entity
        return _entity(
            space=self.space, name=name, type_="thing", report=self.report, seen=self.seen
        )

    def edge(self, edge: dict[str, Any]) -> None:
        space, report = self.space, self.report
        src_id, dst_id = _first(edge, _EDGE_SRC), _first(edge, _EDGE_DST)
        rel = _first(edge, _EDGE_REL)
        src_name, dst_name = self.names.get(src_id, src_id), self.names.get(dst_id, dst_id)
        item = _fact(
            space=space,
            text=f"{src_name} {_rel_words(rel)} {dst_name}",
            subject=src_name,
            predicate=rel.lower().replace(" ", "_"),
            obj=dst_name,
            report=report,
            seen=self.seen,
        )
        if item.screen_status != MemoryItem.Screen.OK:
            return  # a quarantined fact never becomes a graph edge
        src, dst = self._endpoint(src_id, src_name), self._endpoint(dst_id, dst_name)
        if src is None or dst is None:
            return
        pred = item.predicate
        key = (src.norm, pred, dst.norm)
        if (
            key in self.seen.relations
            or Relation.objects.filter(
                space=space, src=src, rel=pred, dst=dst, expired_at=None
            ).exists()
        ):
            report.counts["relations_existing"] += 1
            return
        Relation.objects.create(
            space=space, src=src, rel=pred, dst=dst, item=item, created_at=item.created_at
        )
        self.seen.relations.add(key)
        report.counts["relations_added"] += 1


def import_graph(
    *,
    space: Space,
    dump: dict[str, Any],
    dry_run: bool = False,
    actor: str = SOURCE,
    start: int = 0,
    counts: dict[str, int] | None = None,
    progress: Progress | None = None,
) -> GraphImportReport:
    """Import a {nodes, edges} dump into `space`, CHUNK rows per transaction
    (nodes first, then edges), so a long import never holds the database's
    write lock for long. A run can resume at row `start` with the `counts`
    so far (an import job taken over after its worker died); `progress(done,
    total, report)` is called inside each chunk's transaction, so what it
    records is exactly what committed (a dry run's, after the rollback). With `dry_run` every chunk is rolled
    back and the counts are what a real run would do."""
    from memory.services.palace import slots as palace_slots

    nodes, edges = _validate(dump)
    _check_rows(nodes, edges)
    # Node names and properties become entities and facts: redacted first
    # (deterministic, so the ids edges name still match).
    nodes, edges = redact_json(nodes), redact_json(edges)
    report = GraphImportReport(dry_run=dry_run, counts=Counter(counts or {}))
    importer = _Importer(space=space, nodes=nodes, report=report)
    rows: list[tuple[str, dict[str, Any]]] = [("node", n) for n in nodes]
    rows += [("edge", e) for e in edges]
    total = len(rows)
    for begin in range(start, total, CHUNK):
        end = min(begin + CHUNK, total)
        before = Counter(report.counts)
        try:
            with transaction.atomic():
                for kind, row in rows[begin:end]:
                    if kind == "node":
                        importer.node(row)
                    else:
                        importer.edge(row)
                # The facts made here get their palace places on the
                # palace's next read, or in the background if many.
                palace_slots.mark_backlog(space.pk)
                if dry_run:
                    raise _DryRun
                if progress is not None:
                    progress(end, total, report)
        except _DryRun:
            importer.entities.clear()
            if progress is not None:
                # After the rollback, or the record of it would go too.
                with transaction.atomic():
                    progress(end, total, report)
        except BaseException:
            report.counts = before  # the chunk rolled back: so do its counts
            raise
        if end < total:
            pause_between_chunks()
    if not dry_run:
        audit.record(
            space=space,
            action="import",
            target_type="space",
            target_id=space.pk,
            actor=actor[:60],
            kind="graph",
            nodes=len(nodes),
            edges=len(edges),
            **dict(report.counts),
        )
    return report
