"""Engram's memory layers L1–L4 and their bookkeeping.

Every row belongs to exactly one Space and every query filters by it. Facts are
bi-temporal: valid_from/valid_to say when something was true in the world,
created_at/expired_at say when Engram knew it. Contradictions never delete: the
old fact gets valid_to, expired_at and superseded_by.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class Space(models.Model):
    """A memory namespace: a person's private memory, a project, a team."""

    class Kind(models.TextChoices):
        # A person's memory: identity, preferences, people. Follows them
        # across projects through keys linked to it (ApiKey.user_space).
        USER = "user", "User"
        # A codebase's or team's memory: conventions, decisions, tools.
        PROJECT = "project", "Project"
        SHARED = "shared", "Shared"

    name = models.SlugField(max_length=64, unique=True)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.USER)
    description = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # Drives the consolidator's idle check.
    last_activity_at = models.DateTimeField(null=True, blank=True)
    last_consolidated_at = models.DateTimeField(null=True, blank=True)
    # May this space's keys see the machine Engram runs on (its user, home,
    # PATH, disks) and check paths on it? Off for new spaces: on a shared
    # server that is another tenant's machine. On for the default space.
    host_access = models.BooleanField(
        default=False,
        help_text="Keys of this space may see the server host's environment and check paths on it.",
    )
    # Since when this space may hold live entries without a palace place:
    # rows from before the palace, or stored around the write path (imports).
    # None once a full pass found none (memory.services.palace.slots).
    palace_backlog_at = models.DateTimeField(null=True, blank=True, default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ApiKey(models.Model):
    """A bearer key bound to one space. Only a SHA-256 of the secret is kept;
    the prefix identifies the key in lists and logs."""

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="api_keys")
    # A key of a project space may also read, and on `scope: "user"` write,
    # one user space: the person's memory follows them into the project.
    # Every other space stays as invisible as without the link.
    user_space = models.ForeignKey(
        Space,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="linked_keys",
        limit_choices_to={"kind": "user"},
    )
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.space.name})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


# --- L1 core memory ---------------------------------------------------------------


class CoreBlock(models.Model):
    class Label(models.TextChoices):
        USER = "user", "User"
        AGENT = "agent", "Agent"

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="core_blocks")
    label = models.CharField(max_length=10, choices=Label.choices)
    text = models.TextField(blank=True)
    version = models.PositiveIntegerField(default=0)
    budget_tokens = models.PositiveIntegerField()
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["space", "label"], name="core_block_unique_label"),
        ]
        ordering = ["space", "label"]

    def __str__(self) -> str:
        return f"{self.space.name}/{self.label} v{self.version}"


class CoreBlockVersion(models.Model):
    """Every change to a core block, never rewritten: undo and rollback add a
    new version that copies an old text."""

    block = models.ForeignKey(CoreBlock, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    text = models.TextField(blank=True)
    author = models.CharField(max_length=40, default="agent")
    reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["block", "version"], name="core_version_unique"),
        ]
        ordering = ["block", "-version"]

    def __str__(self) -> str:
        return f"v{self.version} by {self.author}"


# --- L2 episodic memory --------------------------------------------------------------


class Session(models.Model):
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="sessions")
    external_id = models.CharField(max_length=200)
    title = models.CharField(max_length=200, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    last_turn_at = models.DateTimeField(default=timezone.now)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["space", "external_id"], name="session_unique_external_id"
            ),
        ]
        indexes = [models.Index(fields=["space", "last_turn_at"])]
        ordering = ["-last_turn_at"]

    def __str__(self) -> str:
        return self.external_id


class Turn(models.Model):
    class Role(models.TextChoices):
        USER = "user", "User"
        ASSISTANT = "assistant", "Assistant"

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="turns")
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="turns")
    ref = models.CharField(max_length=200, null=True, blank=True)
    role = models.CharField(max_length=10, choices=Role.choices)
    text = models.TextField()
    ts = models.DateTimeField(default=timezone.now)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # Filled by the write pipeline: None until processed, then "" (salient and
    # extracted) or the reason the salience gate skipped it.
    skip_reason = models.CharField(max_length=40, null=True, blank=True)
    screen_status = models.CharField(max_length=10, default="ok")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["space", "session", "ref"],
                condition=Q(ref__isnull=False),
                name="turn_unique_ref",
            ),
        ]
        indexes = [
            models.Index(fields=["space", "ts"]),
            models.Index(fields=["session", "ts"]),
        ]
        ordering = ["ts", "id"]

    def __str__(self) -> str:
        return f"{self.role}: {self.text[:60]}"


class SessionSummary(models.Model):
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="summaries")
    session = models.OneToOneField(Session, on_delete=models.CASCADE, related_name="summary")
    text = models.TextField()
    turn_count = models.PositiveIntegerField(default=0)
    first_ts = models.DateTimeField(null=True, blank=True)
    last_ts = models.DateTimeField(null=True, blank=True)
    method = models.CharField(max_length=20, default="extractive")  # llm | extractive
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "session summaries"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.text[:80]


# --- L3 semantic memory -----------------------------------------------------------------


class MemoryItem(models.Model):
    """One atomic, sentence-sized memory with provenance and lifecycle."""

    class Kind(models.TextChoices):
        FACT = "fact", _("Fact")
        PREFERENCE = "preference", _("Preference")
        EVENT = "event", _("Event")
        INSTRUCTION = "instruction", _("Standing instruction")
        INSIGHT = "insight", _("Insight")
        DECISION = "decision", _("Decision")
        EPISODE = "episode", _("Episode")

    class Status(models.TextChoices):
        ACTIVE = "active", _("Active")
        PENDING_REVIEW = "pending_review", _("Pending review")  # kept with a contradicts edge
        ARCHIVED = "archived", _("Archived")  # decayed: out of recall, restorable
        FORGOTTEN = "forgotten", _("Forgotten")  # soft forget: restorable

    class Screen(models.TextChoices):
        OK = "ok", "OK"
        FLAGGED = "flagged", "Quarantined"

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="items")
    text = models.TextField()
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.FACT)
    subject = models.CharField(max_length=200, blank=True)
    predicate = models.CharField(max_length=100, blank=True)
    object = models.CharField(max_length=500, blank=True)
    importance = models.FloatField(default=0.5)
    frequency = models.PositiveIntegerField(default=1)
    last_seen = models.DateTimeField(default=timezone.now)
    # valid time: when it was true in the world
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_to = models.DateTimeField(null=True, blank=True)
    # When it was said: the turn's `ts`, or the request time of an explicit
    # write. Orders the values of a single-valued predicate, so a turn
    # processed late (a backfill) lands where it was said, not where it arrived.
    stated_at = models.DateTimeField(null=True, blank=True)
    # transaction time: when Engram knew it
    created_at = models.DateTimeField(default=timezone.now)
    expired_at = models.DateTimeField(null=True, blank=True)
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    screen_status = models.CharField(max_length=10, choices=Screen.choices, default=Screen.OK)
    screen_reasons = models.JSONField(default=list, blank=True)
    source = models.CharField(
        max_length=60, default="chat"
    )  # chat | api | manual | import:* | consolidation
    source_session = models.ForeignKey(
        Session, null=True, blank=True, on_delete=models.SET_NULL, related_name="items"
    )
    source_turn_refs = models.JSONField(default=list, blank=True)
    disposition = models.CharField(max_length=10, blank=True)  # ADD | UPDATE | DEFER ...
    content_hash = models.CharField(max_length=64, blank=True, db_index=True)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["space", "status", "expired_at"], name="item_live_idx"),
            models.Index(fields=["space", "subject", "predicate"], name="item_sp_idx"),
            models.Index(fields=["space", "created_at"], name="item_created_idx"),
            models.Index(fields=["space", "kind"], name="item_kind_idx"),
        ]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.text[:80]

    @property
    def is_live(self) -> bool:
        return (
            self.expired_at is None
            and self.status == self.Status.ACTIVE
            and self.screen_status == self.Screen.OK
        )


class FactRevision(models.Model):
    """Append-only history of a fact's window: each change to a fact's
    validity (a supersession, a retraction, a later correction) first records
    the window as it was, with the moment the change was recorded. The fact
    row holds what is known now; the revisions let a `known_at` read rebuild
    exactly what Engram held at any past moment. Never updated."""

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="fact_revisions")
    item = models.ForeignKey(MemoryItem, on_delete=models.CASCADE, related_name="revisions")
    recorded_at = models.DateTimeField()
    # The window before the change.
    prior_valid_from = models.DateTimeField(null=True, blank=True)
    prior_valid_to = models.DateTimeField(null=True, blank=True)
    prior_expired_at = models.DateTimeField(null=True, blank=True)
    prior_superseded_by = models.IntegerField(null=True, blank=True)
    reason = models.CharField(max_length=40, blank=True)

    class Meta:
        indexes = [models.Index(fields=["item", "recorded_at"], name="revision_item_idx")]
        ordering = ["item", "recorded_at", "id"]

    def __str__(self) -> str:
        return f"item {self.item_id} revised at {self.recorded_at:%Y-%m-%d %H:%M} ({self.reason})"


class Retraction(models.Model):
    """The user said a fact stopped being true ("I quit Initech"). Kept
    whether or not a live fact was there to end: a backfill may bring the
    fact later, and it must then arrive already ended where it was taken
    back, as if the turns had come in order."""

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="retractions")
    subject = models.CharField(max_length=200)
    predicate = models.CharField(max_length=100)
    object = models.CharField(max_length=500, blank=True)
    said_at = models.DateTimeField()
    created_at = models.DateTimeField(default=timezone.now)
    turn = models.ForeignKey(
        Turn, null=True, blank=True, on_delete=models.CASCADE, related_name="retractions"
    )

    class Meta:
        indexes = [
            models.Index(fields=["space", "subject", "predicate"], name="retraction_sp_idx"),
        ]
        ordering = ["said_at", "id"]

    def __str__(self) -> str:
        return f"{self.subject} no longer {self.predicate} {self.object}".strip()


class TurnFact(models.Model):
    """A turn stated this fact (it was added, confirmed or replaced from it),
    so a turn whose fact was later superseded can be shown as history."""

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="turn_facts")
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="stated_facts")
    item = models.ForeignKey(MemoryItem, on_delete=models.CASCADE, related_name="stated_in")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["turn", "item"], name="turn_fact_unique"),
        ]
        indexes = [models.Index(fields=["item"], name="turn_fact_item_idx")]

    def __str__(self) -> str:
        return f"turn {self.turn_id} -> item {self.item_id}"


class Entity(models.Model):
    class Type(models.TextChoices):
        PERSON = "person", "Person"
        PLACE = "place", "Place"
        ORG = "org", "Organisation"
        PROJECT = "project", "Project"
        TOOL = "tool", "Tool"
        CONCEPT = "concept", "Concept"
        THING = "thing", "Thing"

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="entities")
    name = models.CharField(max_length=200)
    norm = models.CharField(max_length=200)
    type = models.CharField(max_length=20, choices=Type.choices, default=Type.THING)
    summary = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_mentioned_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["space", "norm"], name="entity_unique_norm"),
        ]
        verbose_name_plural = "entities"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class EntityAlias(models.Model):
    """Every normalized name an entity answers to (its own norm included), so
    "Anna", "anna" and "Anna K." resolve to one entity with one indexed query."""

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="entity_aliases")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="aliases")
    alias = models.CharField(max_length=200)
    norm = models.CharField(max_length=200)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["space", "norm"], name="alias_unique_norm"),
        ]
        verbose_name_plural = "entity aliases"

    def __str__(self) -> str:
        return self.alias


class Relation(models.Model):
    """A graph edge with the same validity window as the fact it came from."""

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="relations")
    src = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="out_relations")
    rel = models.CharField(max_length=100)
    dst = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="in_relations")
    item = models.ForeignKey(
        MemoryItem, null=True, blank=True, on_delete=models.CASCADE, related_name="relations"
    )
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_to = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    expired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["space", "src", "expired_at"], name="relation_src_idx"),
            models.Index(fields=["space", "dst", "expired_at"], name="relation_dst_idx"),
        ]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.src} -{self.rel}-> {self.dst}"


class MemoryVector(models.Model):
    """A float32 embedding of one item, turn or summary under one model. The
    dimension is recorded so a mismatch with the configured model is refused."""

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="vectors")
    item = models.ForeignKey(
        MemoryItem, null=True, blank=True, on_delete=models.CASCADE, related_name="vectors"
    )
    turn = models.ForeignKey(
        Turn, null=True, blank=True, on_delete=models.CASCADE, related_name="vectors"
    )
    summary = models.ForeignKey(
        SessionSummary, null=True, blank=True, on_delete=models.CASCADE, related_name="vectors"
    )
    model = models.CharField(max_length=200)
    dim = models.PositiveIntegerField()
    vec = models.BinaryField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(item__isnull=False, turn__isnull=True, summary__isnull=True)
                    | Q(item__isnull=True, turn__isnull=False, summary__isnull=True)
                    | Q(item__isnull=True, turn__isnull=True, summary__isnull=False)
                ),
                name="vector_exactly_one_target",
            ),
            models.UniqueConstraint(fields=["item", "model"], name="vector_unique_item_model"),
            models.UniqueConstraint(fields=["turn", "model"], name="vector_unique_turn_model"),
            models.UniqueConstraint(
                fields=["summary", "model"], name="vector_unique_summary_model"
            ),
        ]
        indexes = [models.Index(fields=["space", "model"], name="vector_space_model_idx")]

    def __str__(self) -> str:
        return f"{self.model} ({self.dim}d)"


class Belief(models.Model):
    """A higher-level observation distilled from many items, with its evidence.
    Refuted beliefs are kept for audit and never injected."""

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        STALE = "stale", "Stale (needs review)"
        REFUTED = "refuted", "Refuted"

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="beliefs")
    text = models.TextField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    evidence = models.ManyToManyField(MemoryItem, related_name="beliefs", blank=True)
    proof_count = models.PositiveIntegerField(default=0)
    history = models.JSONField(default=list, blank=True)  # [{verdict, at, note}]
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["space", "status"], name="belief_status_idx")]
        ordering = ["-proof_count", "-updated_at"]

    def __str__(self) -> str:
        return self.text[:80]


# --- L4 procedural memory -------------------------------------------------------------


class Skill(models.Model):
    """A reusable procedure. Drafts proposed by the consolidator start disabled:
    a person enables them, the system never grants itself a capability."""

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="skills")
    name = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    body = models.TextField(blank=True)
    enabled = models.BooleanField(default=False)
    is_draft = models.BooleanField(default=True)
    source = models.CharField(max_length=60, default="manual")
    evidence_turn_refs = models.JSONField(default=list, blank=True)
    usage_count = models.PositiveIntegerField(default=0)
    last_used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["space", "name"], name="skill_unique_name"),
        ]
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


# --- The memory palace ------------------------------------------------------------------


class PalaceEntry(models.Model):
    """An entry's fixed place in the memory palace (room#slot), its placard
    and its spaced-repetition schedule (memory/services/palace/).

    A row of its own rather than columns on MemoryItem: skills are slotted
    too, a forgotten or superseded entry keeps its row so its slot stays
    taken (slots are never recycled), and the table's primary key is the
    append-only tour route. The schedule lives on the same row so a write
    costs one INSERT here. Rows are never reordered or renumbered."""

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="palace")
    # SET_NULL: a deleted entry leaves its slot vacant rather than freeing
    # the number for reuse (a hard forget blanks the placard first).
    item = models.OneToOneField(
        MemoryItem, null=True, blank=True, on_delete=models.SET_NULL, related_name="palace"
    )
    skill = models.OneToOneField(
        Skill, null=True, blank=True, on_delete=models.SET_NULL, related_name="palace"
    )
    # The room: its family (fact, preference, decision, episode, skill) and
    # its number in that family (1 is "Fact Hall", 2 "Fact Hall-2").
    wing = models.CharField(max_length=20)
    room_no = models.PositiveIntegerField(default=1)
    slot = models.PositiveIntegerField()
    # The normalized subject, so a topic keeps landing in the same room.
    topic = models.CharField(max_length=200, blank=True)
    placard = models.CharField(max_length=120)
    # The marker rule's parts, kept current when a later placard clashes
    # with this one, so the refurb list is an index read, not a rescan.
    placard_unique = models.BooleanField(default=True)
    placard_clash = models.BooleanField(default=False)
    placard_score = models.FloatField(default=0.0)
    # SM-2: due_at is None for an entry not under review scheduling.
    due_at = models.DateTimeField(null=True, blank=True)
    interval_days = models.PositiveIntegerField(default=0)
    ease = models.FloatField(default=2.5)
    repetitions = models.PositiveIntegerField(default=0)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["space", "wing", "room_no", "slot"], name="palace_unique_slot"
            ),
        ]
        # No index on (space, wing, room_no) beside the unique one it is a
        # prefix of: with stale statistics PostgreSQL walked that one and
        # sorted a whole wing's slots to find its last (the room directory
        # of every /context: 25 ms at 100k facts, 0.4 ms on the unique one).
        indexes = [
            models.Index(fields=["space", "wing", "topic"], name="palace_topic_idx"),
            models.Index(fields=["space", "placard"], name="palace_placard_idx"),
            models.Index(fields=["space", "due_at"], name="palace_due_idx"),
            models.Index(fields=["space", "placard_score"], name="palace_score_idx"),
            # The highest item and skill slotted: what first use checks past.
            models.Index(fields=["space", "item"], name="palace_item_idx"),
            models.Index(fields=["space", "skill"], name="palace_skill_idx"),
        ]
        ordering = ["id"]
        verbose_name_plural = "palace entries"

    def __str__(self) -> str:
        return f"{self.wing}-{self.room_no}#{self.slot}"


# --- Bookkeeping -----------------------------------------------------------------------


class AuditEvent(models.Model):
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="audit_events")
    action = models.CharField(
        max_length=30
    )  # add | update | delete | noop | expire | forget | edit ...
    target_type = models.CharField(max_length=30)  # item | core | turn | entity | skill | space ...
    target_id = models.CharField(max_length=64, blank=True)
    actor = models.CharField(max_length=60, default="system")
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["space", "created_at"], name="audit_space_time_idx"),
            models.Index(fields=["space", "target_type", "target_id"], name="audit_target_idx"),
        ]
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.action} {self.target_type}:{self.target_id}"


class IngestJob(models.Model):
    """The durable outbox: committed with its turn, claimed by workers with a
    conditional UPDATE and a lease, re-sent by the sweeper if lost."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        DEAD = "dead", _("Dead-lettered")
        # An import job a curator paused: no worker claims it, the sweeper
        # leaves it alone; resumed, it goes on from its last committed chunk.
        PAUSED = "paused", _("Paused")

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="ingest_jobs")
    turn = models.ForeignKey(
        Turn, null=True, blank=True, on_delete=models.CASCADE, related_name="jobs"
    )
    kind = models.CharField(max_length=20, default="turn")
    idempotency_key = models.CharField(max_length=200, unique=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    lease_until = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    result = models.JSONField(default=dict, blank=True)
    # Import jobs (kind "import_*") carry what to import until they are done,
    # and how far they got while running (memory.services.imports.jobs).
    payload = models.JSONField(default=dict, blank=True)
    progress = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["status", "lease_until"], name="job_status_lease_idx"),
            models.Index(fields=["space", "status"], name="job_space_status_idx"),
        ]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"job {self.pk} {self.status}"


class LlmUsage(models.Model):
    """LLM calls per space per hour, for the hourly budget. Incremented with a
    conditional UPDATE so concurrent workers cannot overspend."""

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="llm_usage")
    hour = models.DateTimeField()
    calls = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["space", "hour"], name="llm_usage_unique_hour"),
        ]

    def __str__(self) -> str:
        return f"{self.space_id} {self.hour:%Y-%m-%d %H}h: {self.calls}"


class SearchBatch(models.Model):
    """One memory_search answer, kept so memory_assess can check that the
    evidence an agent cites came from that answer: `refs` maps each row's ref
    to the result id. The latest BATCHES_PER_SESSION per session are kept."""

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="search_batches")
    batch_id = models.CharField(max_length=32, unique=True)
    session_key = models.CharField(max_length=200, default="default")
    query = models.CharField(max_length=500, blank=True)
    refs = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    assessed_at = models.DateTimeField(null=True, blank=True)
    verdict = models.JSONField(default=dict, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["space", "session_key", "created_at"], name="batch_session_idx")
        ]
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"batch {self.batch_id} ({self.session_key})"


class Adjudication(models.Model):
    """One uncertain write the judge was asked about (or would have been,
    had it answered): what the rules said, what the judge said, what was
    written, and why the rules stood when they did. Written in the same
    transaction as the decision it explains, so a job delivered twice
    records once. The candidate text is the screened (redacted) text."""

    class Kind(models.TextChoices):
        BAND = "band", "Uncertain band (merge / accept / defer)"
        CONTRADICTION = "contradiction", "Contradiction confirmation"

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="adjudications")
    # The item written (ADD / DEFER) or reinforced (NOOP). CASCADE: the
    # record quotes the fact, so forgetting the fact forgets the record.
    item = models.ForeignKey(
        MemoryItem, null=True, blank=True, on_delete=models.CASCADE, related_name="adjudications"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    candidate_text = models.TextField()
    neighbour_ids = models.JSONField(default=list, blank=True)
    similarity = models.FloatField(default=0.0)
    rules_action = models.CharField(max_length=10)
    # merge | accept | defer (band), contradicts | consistent (contradiction);
    # empty when the judge gave none.
    verdict = models.CharField(max_length=20, blank=True)
    action = models.CharField(max_length=10, blank=True)  # what the write did
    judge_used = models.BooleanField(default=False)
    judge = models.CharField(max_length=100, blank=True)  # the provider's name
    elapsed_ms = models.FloatField(default=0.0)
    fallback_reason = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["space", "-id"], name="adjudication_space_idx")]
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        verdict = self.verdict or f"rules ({self.fallback_reason})"
        return f"{self.kind}: {self.rules_action} -> {verdict}"


# --- Project documents (federated into recall) --------------------------------------------


class Document(models.Model):
    """A project document (README, design note, manual page) of one space,
    split into chunks that recall searches beside memory. Not a claim with a
    validity window: as_of and known_at do not apply to it. Replacing a
    document replaces its chunks; deleting it is a hard delete."""

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="documents")
    title = models.CharField(max_length=300)
    # Where it came from (a file path relative to the indexed folder, or a
    # client's own name); unique per space when given, so re-indexing
    # replaces instead of duplicating.
    path = models.CharField(max_length=1000, blank=True)
    content_hash = models.CharField(max_length=64)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["space", "path"], condition=~Q(path=""), name="document_unique_path"
            ),
        ]
        indexes = [models.Index(fields=["space", "-id"], name="document_space_idx")]

    def __str__(self) -> str:
        return self.title


class DocumentChunk(models.Model):
    """One section (or part of a long one) of a document, in reading order.
    The space is repeated from the document so search filters one table.
    A chunk the screen flags is kept quarantined: never recalled."""

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="document_chunks")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    section = models.CharField(max_length=1000, blank=True)  # "Install > Docker"
    text = models.TextField()
    screen_status = models.CharField(max_length=10, default="ok")
    # The chunk's embedding under vec_model when embeddings were on (float32,
    # unit length); it lives and dies with the row.
    vec_model = models.CharField(max_length=200, blank=True)
    vec = models.BinaryField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["document", "ordinal"], name="chunk_unique_ordinal"),
        ]
        indexes = [models.Index(fields=["space", "screen_status"], name="chunk_space_idx")]
        ordering = ["document", "ordinal"]

    def __str__(self) -> str:
        return f"{self.document_id}#{self.ordinal}"


class ProposedWrite(models.Model):
    """A write an agent asked for while ENGRAM_WRITE_APPROVAL gates it: a
    core-block change (`core`, `all`) or a fact (`all`). Nothing is applied
    until a person approves; approving runs the payload through the same
    service the direct write uses. The payload is stored as screened
    (redacted), never raw; a decided proposal is kept as the record."""

    class Target(models.TextChoices):
        CORE = "core", _("Core block")
        FACT = "fact", _("Fact")

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        APPROVED = "approved", _("Approved")
        REJECTED = "rejected", _("Rejected")

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="proposals")
    target = models.CharField(max_length=10, choices=Target.choices)
    label = models.CharField(max_length=10, blank=True)  # the core block (user | agent)
    # core: {"op": "set", "text"} (a whole block) or {"op": "save", "action",
    # "text", "old_text"} (one entry); fact: the fact service's fields.
    payload = models.JSONField(default=dict)
    # The block's version when it was proposed (core only): how stale it is.
    base_version = models.IntegerField(null=True, blank=True)
    proposer = models.CharField(max_length=60)  # the key (api:prefix) or tool caller
    reason = models.CharField(max_length=200, blank=True)
    # The screen's reasons when it flagged the text: approved, it is stored quarantined.
    screen_reasons = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    decided_by = models.CharField(max_length=150, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(default=dict, blank=True)  # what approving wrote
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["space", "status", "-id"], name="proposal_space_idx")]
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        where = f"core {self.label}" if self.target == self.Target.CORE else "fact"
        return f"proposal #{self.pk} ({where}, {self.status})"
