"""Import a `{nodes, edges}` knowledge-graph dump, as Cognee and similar tools
write it: nodes become entities (plus a fact when the node has a
description), edges become relations plus a fact "A rel B". Every fact is
screened and carries source='import:cognee'. Idempotent: a fact already
imported with the same wording is found by its content hash, an edge by its
(src, rel, dst)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from memory.errors import Invalid
from memory.models import Entity, MemoryItem, Relation, Space
from memory.screening import redact_json, screen
from memory.services import audit, graph
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


def _first(obj: dict[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = obj.get(key)
        if isinstance(value, str | int) and str(value).strip():
            return " ".join(str(value).split())
    return ""


def _rel_words(rel: str) -> str:
    return " ".join(rel.replace("_", " ").replace("-", " ").split())


def _fact(
    *, space: Space, text: str, subject: str, predicate: str, obj: str, report: GraphImportReport
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


def _entity(*, space: Space, name: str, type_: str, report: GraphImportReport) -> Entity | None:
    if screen(name).flagged or not graph.normalize(name):
        report.counts["nodes_refused"] += 1
        return None
    before = Entity.objects.filter(space=space).count()
    entity = graph.upsert_entity(space=space, name=name, type=type_)
    report.counts[
        "entities_added"
        if Entity.objects.filter(space=space).count() > before
        else "entities_existing"
    ] += 1
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


def import_graph(
    *, space: Space, dump: dict[str, Any], dry_run: bool = False, actor: str = SOURCE
) -> GraphImportReport:
    """Import a {nodes, edges} dump into `space`. With `dry_run` everything is
    computed inside a transaction that is rolled back, so the counts are
    exactly what a real run would do."""
    nodes, edges = _validate(dump)
    # Node names and properties become entities and facts: redacted first
    # (deterministic, so the ids edges name still match).
    nodes, edges = redact_json(nodes), redact_json(edges)
    report = GraphImportReport(dry_run=dry_run)
    try:
        with transaction.atomic():
            names: dict[str, str] = {}
            entities: dict[str, Entity] = {}
            for i, node in enumerate(nodes):
                name = _first(node, _NODE_NAME)
                if not name:
                    raise Invalid(f"nodes[{i}]: needs a name, label or id")
                node_id = _first(node, ("id",)) or name
                names[node_id] = name
                type_ = _TYPES.get(_first(node, ("type",)).lower(), Entity.Type.THING)
                entity = _entity(space=space, name=name, type_=type_, report=report)
                if entity is None:
                    continue
                entities[node_id] = entity
                description = _first(node, _NODE_DESC)
                if description and description != name:
                    _fact(
                        space=space,
                        text=f"{name}: {description}",
                        subject=name,
                        predicate="is",
                        obj=description,
                        report=report,
                    )
            for i, edge in enumerate(edges):
                src_id, dst_id = _first(edge, _EDGE_SRC), _first(edge, _EDGE_DST)
                rel = _first(edge, _EDGE_REL)
                if not src_id or not dst_id or not rel:
                    raise Invalid(f"edges[{i}]: needs source, target and relation")
                src_name, dst_name = names.get(src_id, src_id), names.get(dst_id, dst_id)
                words = _rel_words(rel)
                item = _fact(
                    space=space,
                    text=f"{src_name} {words} {dst_name}",
                    subject=src_name,
                    predicate=rel.lower().replace(" ", "_"),
                    obj=dst_name,
                    report=report,
                )
                if item.screen_status != MemoryItem.Screen.OK:
                    continue  # a quarantined fact never becomes a graph edge
                src = entities.get(src_id) or _entity(
                    space=space, name=src_name, type_="thing", report=report
                )
                dst = entities.get(dst_id) or _entity(
                    space=space, name=dst_name, type_="thing", report=report
                )
                if src is None or dst is None:
                    continue
                pred = item.predicate
                if Relation.objects.filter(
                    space=space, src=src, rel=pred, dst=dst, expired_at=None
                ).exists():
                    report.counts["relations_existing"] += 1
                    continue
                Relation.objects.create(
                    space=space, src=src, rel=pred, dst=dst, item=item, created_at=item.created_at
                )
                report.counts["relations_added"] += 1
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
            if dry_run:
                raise _DryRun
    except _DryRun:
        pass
    return report
