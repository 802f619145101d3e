"""Every model's database constraints, enforced by SQLite and PostgreSQL alike."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import IntegrityError, transaction

from consolidation.models import ConsolidationRun
from memory.models import (
    CoreBlock,
    CoreBlockVersion,
    Entity,
    EntityAlias,
    IngestJob,
    LlmUsage,
    MemoryItem,
    MemoryVector,
    Session,
    SessionSummary,
    Skill,
    Space,
    Turn,
)

pytestmark = pytest.mark.django_db


def refused(create) -> bool:  # type: ignore[no-untyped-def]
    """True when the database refuses the row (the savepoint keeps the test's
    transaction usable on PostgreSQL)."""
    try:
        with transaction.atomic():
            create()
    except IntegrityError:
        return True
    return False


@pytest.fixture
def other() -> Space:
    return Space.objects.create(name="other-space")


def test_it_keeps_one_core_block_per_label(space, other):
    CoreBlock.objects.create(space=space, label="user", budget_tokens=500)
    assert refused(lambda: CoreBlock.objects.create(space=space, label="user", budget_tokens=5))
    assert not refused(
        lambda: CoreBlock.objects.create(space=space, label="agent", budget_tokens=5)
    )
    assert not refused(lambda: CoreBlock.objects.create(space=other, label="user", budget_tokens=5))


def test_it_keeps_core_versions_unique(space):
    block = CoreBlock.objects.create(space=space, label="user", budget_tokens=500)
    CoreBlockVersion.objects.create(block=block, version=1, text="a")
    assert refused(lambda: CoreBlockVersion.objects.create(block=block, version=1, text="b"))


def test_it_keeps_session_external_ids_unique_per_space(space, other):
    Session.objects.create(space=space, external_id="s1")
    assert refused(lambda: Session.objects.create(space=space, external_id="s1"))
    assert not refused(lambda: Session.objects.create(space=other, external_id="s1"))


def test_it_makes_turn_refs_unique_only_when_given(space):
    session = Session.objects.create(space=space, external_id="s1")
    second = Session.objects.create(space=space, external_id="s2")

    def turn(ref, sess=session):  # type: ignore[no-untyped-def]
        return lambda: Turn.objects.create(
            space=space, session=sess, role="user", text="x", ref=ref
        )

    turn("t1")()
    assert refused(turn("t1"))
    # The same ref in another session is another turn.
    assert not refused(turn("t1", second))
    # Turns without a ref never collide.
    assert not refused(turn(None))
    assert not refused(turn(None))
    assert Turn.objects.filter(session=session, ref=None).count() == 2


def test_it_keeps_one_summary_per_session(space):
    session = Session.objects.create(space=space, external_id="s1")
    SessionSummary.objects.create(space=space, session=session, text="a")
    assert refused(lambda: SessionSummary.objects.create(space=space, session=session, text="b"))


def test_it_keeps_entity_and_alias_norms_unique_per_space(space, other):
    anna = Entity.objects.create(space=space, name="Anna", norm="anna")
    assert refused(lambda: Entity.objects.create(space=space, name="ANNA", norm="anna"))
    assert not refused(lambda: Entity.objects.create(space=other, name="Anna", norm="anna"))
    EntityAlias.objects.create(space=space, entity=anna, alias="Anna K.", norm="anna k")
    assert refused(
        lambda: EntityAlias.objects.create(space=space, entity=anna, alias="anna k", norm="anna k")
    )
    other_anna = Entity.objects.get(space=other, norm="anna")
    assert not refused(
        lambda: EntityAlias.objects.create(
            space=other, entity=other_anna, alias="Anna K.", norm="anna k"
        )
    )


def test_it_gives_a_vector_exactly_one_target(space):
    session = Session.objects.create(space=space, external_id="s1")
    turn = Turn.objects.create(space=space, session=session, role="user", text="hello")
    item = MemoryItem.objects.create(space=space, text="Anna lives in Lisbon")

    def vector(**targets):  # type: ignore[no-untyped-def]
        return lambda: MemoryVector.objects.create(
            space=space, model="m", dim=2, vec=b"\0" * 8, **targets
        )

    assert refused(vector())
    assert refused(vector(item=item, turn=turn))
    assert not refused(vector(item=item))
    assert not refused(vector(turn=turn))


def test_it_keeps_one_vector_per_target_and_model(space):
    item = MemoryItem.objects.create(space=space, text="Anna lives in Lisbon")
    MemoryVector.objects.create(space=space, item=item, model="m", dim=2, vec=b"\0" * 8)
    assert refused(
        lambda: MemoryVector.objects.create(space=space, item=item, model="m", dim=2, vec=b"1" * 8)
    )
    assert not refused(
        lambda: MemoryVector.objects.create(space=space, item=item, model="n", dim=2, vec=b"1" * 8)
    )


def test_it_allows_one_active_consolidation_run_per_space(space, other):
    ConsolidationRun.objects.create(space=space, status="running")
    assert refused(lambda: ConsolidationRun.objects.create(space=space, status="pending"))
    assert not refused(lambda: ConsolidationRun.objects.create(space=other, status="pending"))
    # Finished runs pile up freely: the constraint only covers active ones.
    assert not refused(lambda: ConsolidationRun.objects.create(space=space, status="done"))
    assert not refused(lambda: ConsolidationRun.objects.create(space=space, status="failed"))


def test_it_keeps_skill_names_unique_per_space(space, other):
    Skill.objects.create(space=space, name="deploy")
    assert refused(lambda: Skill.objects.create(space=space, name="deploy"))
    assert not refused(lambda: Skill.objects.create(space=other, name="deploy"))


def test_it_counts_llm_usage_once_per_hour(space):
    hour = datetime(2026, 1, 1, 10, tzinfo=UTC)
    LlmUsage.objects.create(space=space, hour=hour, calls=1)
    assert refused(lambda: LlmUsage.objects.create(space=space, hour=hour, calls=1))
    assert not refused(
        lambda: LlmUsage.objects.create(space=space, hour=hour.replace(hour=11), calls=1)
    )


def test_it_keeps_job_idempotency_keys_unique(space):
    IngestJob.objects.create(space=space, idempotency_key="turn:1")
    assert refused(lambda: IngestJob.objects.create(space=space, idempotency_key="turn:1"))


def test_it_keeps_space_names_and_key_prefixes_unique(space):
    from memory.models import ApiKey

    assert refused(lambda: Space.objects.create(name=space.name))
    ApiKey.objects.create(space=space, prefix="abcd1234", key_hash="x")
    assert refused(lambda: ApiKey.objects.create(space=space, prefix="abcd1234", key_hash="y"))


def test_it_removes_everything_of_a_space_with_it(space):
    session = Session.objects.create(space=space, external_id="s1")
    Turn.objects.create(space=space, session=session, role="user", text="hello")
    item = MemoryItem.objects.create(space=space, text="Anna lives in Lisbon")
    MemoryVector.objects.create(space=space, item=item, model="m", dim=2, vec=b"\0" * 8)
    space.delete()
    assert not Turn.objects.exists()
    assert not MemoryItem.objects.exists()
    assert not MemoryVector.objects.exists()
