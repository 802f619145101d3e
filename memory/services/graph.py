"""The entity graph: entities resolved through their aliases, and relations
that share the validity window of the fact they came from.

Name resolution rule. A name is normalized (Unicode NFKD without accents,
case-folded, punctuation to spaces, a leading "the" dropped), then looked up in
EntityAlias, so "Anna" and "anna" are one entity. A name that differs from a
known name only by initials ("Anna K.", "A. Smith" -> "anna k", "a smith")
resolves to the entity of the name without the initials, and the initialed
form becomes an alias; the reverse holds too (first "Anna K.", later "Anna").
Two different full names ("Anna Karenina", "Anna Schmidt") are NOT merged into
"Anna": without initials there is no evidence they are the same person, and a
wrong merge is harder to undo than a missing one.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Collection, Iterable
from datetime import timedelta

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from engram_site.db import batch
from memory.models import Entity, EntityAlias, MemoryItem, Relation, Space

_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)
MAX_NGRAM = 4

# Subjects that mean the person Engram serves.
USER_NAMES = frozenset({"user", "me", "i", "myself", "the user"})


def normalize(name: str) -> str:
    decomposed = unicodedata.normalize("NFKD", name or "")
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    words = _NON_WORD.sub(" ", plain.casefold()).replace("_", " ").split()
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    return " ".join(words)[:200]


def _without_initials(norm: str) -> str:
    # An initial is one letter: a one-character number ("Ada 1 Lovelace")
    # is part of the name, and names differing in it are different things.
    words = norm.split()
    kept = [w for w in words if len(w) > 1 or not w.isalpha()]
    if len(kept) == len(words) or not kept:
        return ""
    return " ".join(kept)


def _other_initials(entity: Entity, norm: str, base: str) -> bool:
    """`entity`, found through the initial-free `base` of `norm`, carries
    initials of its own that differ ("Ada K Lovelace" for "Ada J Lovelace"):
    two different people, not one name written two ways."""
    return entity.norm not in (norm, base) and _without_initials(entity.norm) == base


def _find(space: Space, norms: Iterable[str]) -> tuple[Entity | None, set[str]]:
    """The entity the first known norm belongs to, and which norms are known."""
    wanted = [n for n in dict.fromkeys(norms) if n]
    if not wanted:
        return None, set()
    aliases = {
        a.norm: a.entity
        for a in EntityAlias.objects.filter(space=space, norm__in=wanted).select_related("entity")
    }
    for norm in wanted:
        if norm in aliases:
            return aliases[norm], set(aliases)
    return None, set()


def _add_alias(space: Space, entity: Entity, alias: str, norm: str) -> None:
    if not norm:
        return
    try:
        with transaction.atomic():
            EntityAlias.objects.get_or_create(
                space=space, norm=norm, defaults={"entity": entity, "alias": alias[:200]}
            )
    except IntegrityError:
        pass  # taken concurrently; it points at whichever entity won


def find_entity(*, space: Space, name: str) -> Entity | None:
    """The entity `name` refers to, if any: by alias, or by the name without
    its initials ("Anna K." -> Anna). Never creates one."""
    norm = normalize(name)
    base = _without_initials(norm)
    entity, known = _find(space, [norm, base])
    if entity is not None and norm not in known and _other_initials(entity, norm, base):
        return None
    return entity


def add_aliases(*, space: Space, entity: Entity, names: Iterable[str]) -> None:
    """More names `entity` answers to. A name that already belongs to
    another entity keeps pointing there (merging is a curator's call)."""
    for name in names:
        _add_alias(space, entity, name, normalize(name))


MENTION_RESOLUTION = timedelta(minutes=1)


def upsert_entity(
    *, space: Space, name: str, type: str = "thing", aliases: Iterable[str] = ()
) -> Entity:
    """The entity `name` (or one of `aliases`) refers to, created if new."""
    name = " ".join((name or "").split())[:200]
    norm = normalize(name)
    if not norm:
        raise ValueError("an entity needs a name with at least one letter or digit")
    alias_norms = [(a, normalize(a)) for a in aliases if normalize(a)]
    base = _without_initials(norm)
    entity, known = _find(space, [norm, *(n for _, n in alias_norms), base])
    if (
        entity is not None
        and not known.intersection([norm, *(n for _, n in alias_norms)])
        and _other_initials(entity, norm, base)
    ):
        entity = None  # known keeps `base`: it stays the other entity's alias
    now = timezone.now()
    if entity is None:
        # An initial-free name may already exist as the base of an initialed
        # alias ("Anna K." seen first, now "Anna").
        try:
            with transaction.atomic():
                entity = Entity.objects.create(
                    space=space,
                    name=name,
                    norm=norm,
                    type=type if type in Entity.Type.values else Entity.Type.THING,
                    last_mentioned_at=now,
                )
        except IntegrityError:
            entity = Entity.objects.get(space=space, norm=norm)
    else:
        updates: dict[str, object] = {}
        # "Last mentioned" to the minute: the user and other frequent
        # entities are mentioned by nearly every write, and an UPDATE each
        # time is a row write inside the write lock for a stamp no one
        # reads more finely.
        last = entity.last_mentioned_at
        if last is None or now - last >= MENTION_RESOLUTION:
            updates["last_mentioned_at"] = now
        if entity.type == Entity.Type.THING and type in Entity.Type.values and type != "thing":
            updates["type"] = type
            entity.type = type
        if updates:
            Entity.objects.filter(pk=entity.pk).update(**updates)
    for alias, alias_norm in [(name, norm), (base, base), *alias_norms]:
        if alias_norm and alias_norm not in known:
            _add_alias(space, entity, alias, alias_norm)
            known.add(alias_norm)
    return entity


def entity_type_for(predicate: str) -> str:
    p = predicate.lower()
    if p in {"lives_in", "moved_to", "from", "located_in", "visited", "born_in"}:
        return Entity.Type.PLACE
    if p in {"works_at", "studies_at", "employer", "member_of"}:
        return Entity.Type.ORG
    if p in {"role", "studies"}:
        return Entity.Type.CONCEPT
    if p in RELATIONSHIP_PREDICATES:
        return Entity.Type.PERSON
    return Entity.Type.THING


RELATIONSHIP_PREDICATES = frozenset(
    "wife husband partner spouse girlfriend boyfriend fiance fiancee sister brother mother "
    "father mom dad son daughter friend boss manager colleague coworker roommate cousin aunt "
    "uncle grandmother grandfather niece nephew child kid teacher mentor neighbor neighbour "
    "dog cat pet".split()
)


def link(
    *, space: Space, item: MemoryItem, src_name: str, rel: str, dst_name: str
) -> Relation | None:
    """An edge src -rel-> dst carrying the item's validity window. None when a
    side has no usable name or the same edge for this item exists."""
    if not normalize(src_name) or not normalize(dst_name) or not rel:
        return None
    src_type = Entity.Type.PERSON if normalize(src_name) in USER_NAMES else Entity.Type.THING
    src = upsert_entity(space=space, name=src_name, type=src_type)
    dst = upsert_entity(space=space, name=dst_name, type=entity_type_for(rel))
    rel = rel[:100]
    existing = Relation.objects.filter(space=space, src=src, rel=rel, dst=dst, item=item).first()
    if existing is not None:
        return None
    return Relation.objects.create(
        space=space,
        src=src,
        rel=rel,
        dst=dst,
        item=item,
        valid_from=item.valid_from,
        valid_to=item.valid_to,
        created_at=item.created_at,
        expired_at=item.expired_at,
    )


def expire_relations(*, item: MemoryItem) -> int:
    """Close the edges of an invalidated item with the item's own window."""
    return Relation.objects.filter(item=item, expired_at=None).update(
        valid_to=item.valid_to, expired_at=item.expired_at or timezone.now()
    )


# MemoryItem.metadata key listing the edges a soft forget or an archive closed.
SUSPENDED_KEY = "suspended_relations"


def suspend_relations(*, item_ids: Iterable[int]) -> int:
    """Close the live edges of items leaving recall without being superseded
    (soft forget, decay archive), so the graph channel and the dashboard stop
    showing them, and note on each item which edges were closed: restoring it
    reopens exactly those, not the ones a supersession closed before. The
    validity window stays: the fact did not stop being true, it stopped being
    known. Call inside the transaction that changes the items' status."""
    ids = list(item_ids)
    if not ids:
        return 0
    live = Relation.objects.filter(item_id__in=ids, expired_at=None)
    by_item: dict[int, list[int]] = {}
    for item_id, rel_id in live.values_list("item_id", "id"):
        by_item.setdefault(item_id, []).append(rel_id)
    if not by_item:
        return 0
    closed = Relation.objects.filter(
        pk__in=[r for rels in by_item.values() for r in rels], expired_at=None
    ).update(expired_at=timezone.now())
    items = list(MemoryItem.objects.filter(pk__in=by_item).only("pk", "metadata"))
    for item in items:
        known = set(item.metadata.get(SUSPENDED_KEY) or [])
        item.metadata = {**item.metadata, SUSPENDED_KEY: sorted(known | set(by_item[item.pk]))}
    MemoryItem.objects.bulk_update(items, ["metadata"])
    return closed


def revive_relations(*, item: MemoryItem) -> int:
    """Reopen exactly the edges suspend_relations closed for this item and
    clear the note. An item superseded in the meantime keeps its edges closed:
    its successor carries the fact now."""
    metadata = dict(item.metadata or {})
    rel_ids = metadata.pop(SUSPENDED_KEY, None)
    if rel_ids is None:
        return 0
    reopened = 0
    if item.expired_at is None:
        reopened = (
            Relation.objects.filter(item=item, pk__in=rel_ids)
            .exclude(expired_at=None)
            .update(expired_at=None)
        )
    MemoryItem.objects.filter(pk=item.pk).update(metadata=metadata)
    item.metadata = metadata
    return reopened


def _ngrams(words: list[str]) -> list[str]:
    grams: list[str] = []
    for n in range(MAX_NGRAM, 0, -1):
        for i in range(len(words) - n + 1):
            grams.append(" ".join(words[i : i + n]))
    return grams


def entities_in_text(*, space: Space, text: str) -> list[Entity]:
    """Entities named in `text` (any alias, as a whole word n-gram), in order of
    first mention."""
    ids = entity_ids_in_text(space_id=space.pk, text=text)
    by_id = Entity.objects.in_bulk(ids)
    return [by_id[pk] for pk in ids if pk in by_id]


def entity_ids_in_text(*, space_id: int, text: str) -> list[int]:
    """The ids of the entities named in `text`, in order of first mention:
    one indexed query on (space, norm)."""
    read = entity_ids_read(space_id=space_id, text=text)
    return batch.one(read) if read is not None else []


def entity_ids_read(*, space_id: int, text: str) -> batch.Read[list[int]] | None:
    """entity_ids_in_text as a read to send with others (recall's graph
    channel asks on every query, beside the fact channel's reads); None when
    `text` has no words. Constant SQL with the n-grams as one array, so a
    connection prepares it once (engram_site/db/prepared.py): building the
    ORM's alias query cost more than running it."""
    words = normalize(text).split()
    if not words:
        return None
    grams = list(dict.fromkeys(_ngrams(words)))
    table = EntityAlias._meta.db_table
    if connection.vendor == "postgresql":
        among, bound = "= ANY(%s::text[])", "{" + ",".join(_array_text(g) for g in grams) + "}"
    else:
        among, bound = "IN (SELECT value FROM json_each(%s))", json.dumps(grams)
    sql = f"SELECT norm, entity_id FROM {table} WHERE space_id = %s AND norm {among}"  # noqa: S608 (constant SQL, bound values)

    def parse(found: batch.Rows) -> list[int]:
        ids: dict[str, int] = dict(found)
        return list(dict.fromkeys(ids[norm] for norm in _by_mention(words, ids)))

    return batch.Read(sql, [space_id, bound], parse)


def _array_text(gram: str) -> str:
    # An element of PostgreSQL's array text form, quoted and escaped.
    return '"' + gram.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _by_mention(words: list[str], found: Collection[str]) -> list[str]:
    # Longest match first, then position: "anna k" beats "anna" at one spot.
    padded = f" {' '.join(words)} "
    return sorted(found, key=lambda n: (padded.find(f" {n} "), -len(n)))
