"""L1 core memory: two small curated blocks (`user`, `agent`) that go into every
prompt.

A block is a list of single-line entries. Budgets are hard and enforced here,
not by convention; every change is screened, written as a new version with an
audit event, and mirrored to USER.md / AGENT.md. Versions are never rewritten:
undo and rollback add a new version carrying an old text. Whole-block writes
take an expected version so two curators cannot overwrite each other silently.
"""

from __future__ import annotations

import difflib
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from engram_site.db import batch, rows
from memory import screening
from memory.errors import Conflict, Invalid, NotFound
from memory.models import CoreBlock, CoreBlockVersion, MemoryItem, Space
from memory.services import audit
from memory.tokens import estimate_tokens

log = logging.getLogger(__name__)

Label = Literal["user", "agent"]
Action = Literal["add", "replace", "remove"]
LABELS: tuple[str, ...] = ("user", "agent")

# How far back the version history is read to find the stalest entry.
_STALENESS_LOOKBACK = 200


@dataclass
class SaveResult:
    ok: bool
    block: CoreBlock
    usage: float
    message: str
    changed: bool = False
    demoted: list[int] = field(default_factory=list)  # ids of facts made from demoted entries
    # Why the screen refused the text (empty unless it did).
    reasons: list[str] = field(default_factory=list)


# --- reading ------------------------------------------------------------------------


def budget_for(label: str) -> int:
    key = "CORE_USER_BUDGET_TOKENS" if label == "user" else "CORE_AGENT_BUDGET_TOKENS"
    return int(settings.ENGRAM[key])


def _check_label(label: str) -> None:
    if label not in LABELS:
        raise Invalid(f"label: must be one of {', '.join(LABELS)}, not {label!r}")


def load_block(*, space: Space, label: str) -> CoreBlock:
    """The block row, created empty on first use, without consulting the mirror."""
    _check_label(label)
    return _ready(space, label, _stored_block(space, label))


def _ready(space: Space, label: str, block: CoreBlock | None) -> CoreBlock:
    """The stored block (None: not stored yet, so created now) with its
    space set and the configured budget."""
    budget = budget_for(label)
    if block is None:
        try:
            with transaction.atomic():
                block = CoreBlock.objects.create(space=space, label=label, budget_tokens=budget)
        except IntegrityError:
            block = CoreBlock.objects.get(space=space, label=label)
    block.space = space
    if block.budget_tokens != budget:
        # The operator changed the configured budget: the configuration wins.
        CoreBlock.objects.filter(pk=block.pk).update(budget_tokens=budget)
        block.budget_tokens = budget
    return block


def _stored_block(space: Space, label: str) -> CoreBlock | None:
    # One hand-written statement (engram_site/db/rows.py says why).
    return rows.first(CoreBlock, "t.space_id = %s AND t.label = %s", [space.pk, label])


def get_block(*, space: Space, label: str) -> CoreBlock:
    """The block, created empty with the configured budget on first use. A mirror
    file edited by a person since the block's last change is imported first."""
    from memory.services import mirror

    block = load_block(space=space, label=label)
    return mirror.import_if_newer(block=block)


def get_blocks(wanted: list[tuple[Space, str]]) -> list[CoreBlock]:
    """get_block for each (space, label) of `wanted`, in its order, read in
    one statement: /context reads the user and the agent block on every turn,
    and on PostgreSQL each statement is a round trip."""
    return batch.one(blocks_read(wanted))


def blocks_read(wanted: list[tuple[Space, str]]) -> batch.Read[list[CoreBlock]]:
    """`get_blocks` as a read to send with others (engram_site/db/batch.py)."""
    from memory.services import mirror

    for _, label in wanted:
        _check_label(label)
    where = " OR ".join(["(t.space_id = %s AND t.label = %s)"] * len(wanted))
    params = [value for space, label in wanted for value in (space.pk, label)]

    def ready(found: list[CoreBlock]) -> list[CoreBlock]:
        stored = {(b.space_id, b.label): b for b in found}
        return [
            mirror.import_if_newer(block=_ready(space, label, stored.get((space.pk, label))))
            for space, label in wanted
        ]

    return rows.every_read(CoreBlock, where, params).then(ready)


def tokens(*, block: CoreBlock) -> int:
    return estimate_tokens(block.text)


def usage(*, block: CoreBlock) -> float:
    """Fill of the block as a fraction of its budget (0..1; above 1 only when the
    operator lowered the budget below what the block already holds)."""
    if block.budget_tokens <= 0:
        return 1.0
    return round(estimate_tokens(block.text) / block.budget_tokens, 4)


def entries(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def normalize(text: str) -> str:
    """The canonical stored form: trailing spaces and blank lines at the edges
    removed, line endings unified. Applying it twice changes nothing, which is
    what makes the Markdown mirror round-trip without loss."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return "\n".join(lines).strip("\n")


def history(*, block: CoreBlock, limit: int = 50) -> list[CoreBlockVersion]:
    return list(block.versions.order_by("-version")[:limit])


def version_text(*, block: CoreBlock, version: int) -> str:
    if version == 0:
        return ""
    row = block.versions.filter(version=version).first()
    if row is None:
        raise NotFound(f"version {version} of the {block.label} block does not exist")
    return row.text


def diff(*, block: CoreBlock, from_version: int, to_version: int) -> str:
    """A unified diff between two versions (version 0 is the empty block)."""
    old = version_text(block=block, version=from_version)
    new = version_text(block=block, version=to_version)
    return "\n".join(
        difflib.unified_diff(
            old.split("\n") if old else [],
            new.split("\n") if new else [],
            fromfile=f"{block.label}@v{from_version}",
            tofile=f"{block.label}@v{to_version}",
            lineterm="",
        )
    )


# --- writing ------------------------------------------------------------------------


def _commit(
    *,
    block: CoreBlock,
    text: str,
    author: str,
    reason: str,
    expected_version: int | None,
) -> CoreBlock:
    """Write `text` as the next version. A conditional UPDATE on the version
    makes a concurrent writer lose loudly instead of silently."""
    from memory.services import mirror

    base = block.version if expected_version is None else expected_version
    now = timezone.now()
    with transaction.atomic():
        updated = CoreBlock.objects.filter(pk=block.pk, version=base).update(
            text=text, version=base + 1, updated_at=now
        )
        if updated != 1:
            current = (
                CoreBlock.objects.filter(pk=block.pk).values_list("version", flat=True).first()
            )
            raise Conflict(
                f"the {block.label} block is at version {current}, not {base}: "
                "someone else changed it; reload and apply your change again"
            )
        CoreBlockVersion.objects.create(
            block=block,
            version=base + 1,
            text=text,
            author=author[:40],
            reason=reason[:200],
            created_at=now,
        )
        audit.record(
            space=block.space_id,
            action="edit",
            target_type="core",
            target_id=block.label,
            actor=author[:60],
            version=base + 1,
            reason=reason[:200],
            tokens=estimate_tokens(text),
        )
        block.text, block.version, block.updated_at = text, base + 1, now
        transaction.on_commit(lambda: mirror.write_block(block_id=block.pk))
    return block


def set_text(
    *,
    space: Space,
    label: str,
    text: str,
    author: str,
    reason: str = "",
    expected_version: int | None = None,
) -> CoreBlock:
    """Replace the whole block. Screened (redacted text is stored; flagged text
    is refused), refused when over budget, Conflict on a version mismatch. An
    unchanged text makes no new version."""
    block = load_block(space=space, label=label)
    if expected_version is not None and expected_version != block.version:
        raise Conflict(
            f"the {label} block is at version {block.version}, not {expected_version}: "
            "someone else changed it; reload and apply your change again"
        )
    new_text = checked_text(block=block, text=text)
    if new_text == block.text:
        return block
    return _commit(
        block=block,
        text=new_text,
        author=author,
        reason=reason,
        expected_version=block.version if expected_version is None else expected_version,
    )


def checked_text(*, block: CoreBlock, text: str) -> str:
    """`text` as the block would store it, or Invalid: flagged by the strict
    screen, or over the block's budget."""
    # Core memory is in every prompt: the strict screen, which refuses what a
    # turn would be quarantined for and any directive to act besides.
    result = screening.screen_strict(text)
    if result.flagged:
        raise Invalid(
            f"text: refused by the injection screen ({', '.join(result.reasons)}); "
            "core memory is put in every prompt, so it must not hold instructions or forged tags"
        )
    new_text = normalize(result.text)
    cost = estimate_tokens(new_text)
    if cost > block.budget_tokens:
        raise Invalid(
            f"text: {cost} tokens is over the {block.label} block's budget of "
            f"{block.budget_tokens}; merge entries into fewer, denser lines"
        )
    return new_text


def rollback(*, space: Space, label: str, version: int, author: str) -> CoreBlock:
    """Restore the text of an old version as a new version."""
    block = load_block(space=space, label=label)
    if version < 0 or version > block.version:
        raise NotFound(f"version {version} of the {label} block does not exist")
    text = version_text(block=block, version=version)
    return set_text(
        space=space,
        label=label,
        text=text,
        author=author,
        reason=f"rollback to v{version}",
        expected_version=block.version,
    )


def undo(
    *, space: Space, label: str, author: str, expected_version: int | None = None
) -> CoreBlock:
    """Revert the latest change: the text of the version before it, as a new version."""
    block = load_block(space=space, label=label)
    if expected_version is not None and expected_version != block.version:
        raise Conflict(f"the {label} block is at version {block.version}, not {expected_version}")
    if block.version == 0:
        raise Invalid(f"the {label} block has no change to undo")
    return rollback(space=space, label=label, version=block.version - 1, author=author)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _matches(lines: list[str], needle: str) -> list[int]:
    return [i for i, line in enumerate(lines) if needle in line]


def _stalest_entry(*, block: CoreBlock, lines: list[str], protect: set[int]) -> int | None:
    """Index of the entry that has gone unchanged the longest: the one present,
    word for word, in the longest unbroken run of past versions. That is the
    entry the agent has least used its curation on. Ties go to the earliest line."""
    candidates = [i for i in range(len(lines)) if i not in protect]
    if not candidates:
        return None
    since = {i: block.version for i in candidates}
    alive = set(candidates)
    for row in block.versions.order_by("-version").only("version", "text")[:_STALENESS_LOOKBACK]:
        present = set(row.text.split("\n"))
        for i in list(alive):
            if lines[i] in present:
                since[i] = row.version
            else:
                alive.discard(i)
        if not alive:
            break
    return min(candidates, key=lambda i: (since[i], i))


# What a core entry is, when no stored fact says so. A standing instruction
# reads as an order or a wish about how to answer; a preference names a like
# or dislike; anything else is a fact (the rule extractor may still find an
# event in it). "use"/"keep" as orders, not "uses"/"keeps" as habits.
_INSTRUCTION = re.compile(
    r"^(?:(?:the\s+)?user\s+)?(?:always|never|please|don'?t|do\s+not|call\s+(?:me|them|the\s+user)|"
    r"answer|reply|respond|write|use|avoid|keep|remind|wants?\b|asks?\b|should\b)\b",
    re.I,
)
_PREFERENCE = re.compile(
    r"\b(?:likes?|loves?|enjoys?|prefers?|dislikes?|hates?|favou?rite|can'?t\s+stand|"
    r"cannot\s+stand|(?:is\s+)?(?:not\s+)?a\s+fan\s+of|(?:does\s+not|doesn'?t)\s+like)\b",
    re.I,
)


def entry_kind(*, space: Space, entry: str) -> str:
    """The kind of memory a core entry holds: the kind of the fact it was
    made from when there is one (pipeline proposals copy a fact's text),
    else what its wording says."""
    line = _one_line(entry.lstrip("-*• "))
    made_from = (
        MemoryItem.objects.filter(space=space, text=line)
        .exclude(kind=MemoryItem.Kind.INSIGHT)
        .order_by("-created_at")
        .values_list("kind", flat=True)
        .first()
    )
    if made_from:
        return str(made_from)
    if _INSTRUCTION.search(line):
        return MemoryItem.Kind.INSTRUCTION
    if _PREFERENCE.search(line):
        return MemoryItem.Kind.PREFERENCE
    return MemoryItem.Kind.FACT


def demote_entry(
    *, space: Space, entry: str, source: str, actor: str, importance: float = 0.5
) -> Any:
    """Keep an entry leaving a block as a semantic fact of its own kind, so
    nothing curated is lost. Returns the facts service's result."""
    from memory.services import facts

    return facts.save_fact(
        space=space,
        text=_one_line(entry.lstrip("-*• ")),
        kind=entry_kind(space=space, entry=entry),
        importance=importance,
        source=source,
        actor=actor,
    )


def _demote(*, space: Space, label: str, entry: str) -> int | None:
    """Keep a demoted entry as a semantic fact, so nothing the agent curated is lost."""
    outcome = demote_entry(space=space, entry=entry, source="core_demote", actor="core")
    return outcome.item.pk if outcome.item is not None else None


def _refused(block: CoreBlock, message: str, reasons: list[str] | None = None) -> SaveResult:
    return SaveResult(
        ok=False, block=block, usage=usage(block=block), message=message, reasons=reasons or []
    )


def screen_entry(*, block: CoreBlock, text: str, author: str) -> tuple[str, SaveResult | None]:
    """One entry as the block would store it (strictly screened, redacted,
    one line), or the refusal answered when the screen flags it (audited)."""
    result = screening.screen_strict(_one_line(text))
    if result.flagged:
        audit.record(
            space=block.space_id,
            action="refuse",
            target_type="core",
            target_id=block.label,
            actor=author[:60],
            reasons=result.reasons,
        )
        return "", _refused(
            block,
            f"Refused by the injection screen ({', '.join(result.reasons)}). Core memory is "
            "put in every prompt: save facts about the user and lessons, not instructions.",
            reasons=result.reasons,
        )
    entry = _one_line(result.text)
    if not entry:
        raise Invalid("text: must not be empty for add and replace")
    return entry, None


def refused(block: CoreBlock, message: str) -> SaveResult:
    """A save answered ok=false with `message` (nothing written)."""
    return _refused(block, message)


def entry_target(lines: list[str], old_text: str, label: str) -> tuple[int | None, str]:
    """The index of the one entry containing `old_text`, or None and why not."""
    needle = _one_line(old_text)
    hits = _matches(lines, needle)
    if not hits:
        return None, f"No entry of the {label} block contains {needle!r}."
    if len({lines[i] for i in hits}) > 1:
        return None, (
            f"{len(hits)} entries contain {needle!r}; give a longer old_text that "
            "matches exactly one entry."
        )
    return hits[0], ""


def save(
    *,
    space: Space,
    label: str,
    action: str,
    text: str,
    old_text: str = "",
    author: str = "agent",
    why: str = "",
) -> SaveResult:
    """The `memory_save` tool on a core block.

    - add: append `text` as one entry (an identical entry is not added twice);
    - replace: the one entry containing `old_text` becomes `text`;
    - remove: the one entry containing `old_text` is removed.
    `old_text` must match exactly one entry (substring match); several matches
    are refused so the agent never edits the wrong line. A write that would
    overflow the budget is refused with a message asking the agent to merge,
    or with ENGRAM_CORE_OVERFLOW=demote the stalest entries become semantic
    facts until the new text fits."""
    block = get_block(space=space, label=label)
    if action not in ("add", "replace", "remove"):
        raise Invalid(f"action: must be add, replace or remove, not {action!r}")
    lines = entries(block.text)
    entry = ""
    if action in ("add", "replace"):
        entry, refusal = screen_entry(block=block, text=text, author=author)
        if refusal is not None:
            return refusal
    needle = _one_line(old_text)
    if action in ("replace", "remove"):
        if not needle:
            raise Invalid(f"old_text: required for {action} (a unique part of the entry)")
        found, why_not = entry_target(lines, needle, label)
        if found is None:
            return _refused(block, why_not)
        target = found
    new_lines = list(lines)
    protect: set[int] = set()
    if action == "add":
        if entry in lines:
            return SaveResult(
                ok=True, block=block, usage=usage(block=block), message="Already in memory."
            )
        new_lines.append(entry)
        protect = {len(new_lines) - 1}
    elif action == "replace":
        if lines[target] == entry:
            return SaveResult(
                ok=True, block=block, usage=usage(block=block), message="Entry unchanged."
            )
        new_lines[target] = entry
        protect = {target}
    else:
        del new_lines[target]

    demoted_entries: list[str] = []
    budget = block.budget_tokens
    overflow_mode = settings.ENGRAM["CORE_OVERFLOW"]
    while estimate_tokens("\n".join(new_lines)) > budget:
        if action == "remove" or overflow_mode != "demote":
            cost = estimate_tokens("\n".join(new_lines))
            return _refused(
                block,
                f"The {label} block would be {cost * 100 // budget}% full ({cost}/{budget} "
                "tokens). Merge related entries into one dense line with action=replace, or "
                "remove outdated entries, then save again.",
            )
        idx = _stalest_entry(block=block, lines=new_lines, protect=protect)
        if idx is None:
            return _refused(
                block,
                f"This entry alone does not fit the {label} block's budget of {budget} "
                "tokens; shorten it.",
            )
        demoted_entries.append(new_lines.pop(idx))
        protect = {p - 1 if p > idx else p for p in protect}

    reason = {"add": "add", "replace": "replace", "remove": "remove"}[action]
    if demoted_entries:
        reason += f", demoted {len(demoted_entries)}"
    if why:
        reason += f": {why}"
    block = _commit(
        block=block,
        text=normalize("\n".join(new_lines)),
        author=author,
        reason=reason,
        expected_version=block.version,
    )
    demoted_ids: list[int] = []
    for demoted in demoted_entries:
        item_id = _demote(space=space, label=label, entry=demoted)
        if item_id is not None:
            demoted_ids.append(item_id)
    message = {"add": "Added.", "replace": "Replaced.", "remove": "Removed."}[action]
    if demoted_entries:
        message += (
            f" {len(demoted_entries)} older entr{'y was' if len(demoted_entries) == 1 else 'ies were'}"
            " moved to long-term memory to make room."
        )
    u = usage(block=block)
    if u > 0.8:
        message += f" The block is {round(u * 100)}% full: merge entries soon."
    return SaveResult(
        ok=True, block=block, usage=u, message=message, changed=True, demoted=demoted_ids
    )


# --- the write pipeline's core-memory proposal (step 6) ------------------------------

# Single-valued facts about the user: a new value replaces the old line.
IDENTITY_PREDICATES = frozenset(
    {
        "name",
        "called",
        "is_called",
        "named",
        "nickname",
        "preferred_name",
        "lives_in",
        "located_in",
        "home",
        "works_at",
        "employer",
        "works_as",
        "job",
        "role",
        "occupation",
        "title",
        "age",
        "birthday",
        "born_on",
        "pronouns",
        "timezone",
        "language",
        "native_language",
        "speaks",
    }
)
_USER_SUBJECTS = frozenset({"", "user", "the user", "i", "me", "my", "myself", "self", "you"})
_NAME_PREDICATES = ("name", "called", "is_called", "named", "preferred_name", "nickname")


def _norm(value: str) -> str:
    return " ".join(value.lower().replace("_", " ").split())


def _pred(value: str) -> str:
    return "_".join(value.lower().replace("-", " ").split())


def _is_about_user(*, space: Space, subject: str) -> bool:
    subj = _norm(subject)
    if subj in _USER_SUBJECTS:
        return True
    # The user may be named in the subject ("Priya lives in Pune") once Engram
    # knows the user's name.
    names = MemoryItem.objects.filter(
        space=space, predicate__in=_NAME_PREDICATES, expired_at=None, status="active"
    ).values_list("subject", "object")
    return any(_norm(s) in _USER_SUBJECTS and _norm(o) == subj for s, o in names)


def is_identity_grade(*, space: Space, item: MemoryItem) -> bool:
    if item.importance < 0.8 or item.screen_status != MemoryItem.Screen.OK:
        return False
    pred = _pred(item.predicate)
    if item.kind in (MemoryItem.Kind.PREFERENCE, MemoryItem.Kind.INSTRUCTION):
        return _is_about_user(space=space, subject=item.subject)
    return pred in IDENTITY_PREDICATES and _is_about_user(space=space, subject=item.subject)


def propose_from_fact(*, space: Space, item: MemoryItem) -> bool:
    """Step 6 of the write pipeline: an identity-grade fact about the user
    becomes a line of the user block. The line of a fact it superseded, or of
    an older value of the same single-valued predicate, is replaced rather than
    kept beside it. Screened and within budget; returns whether the block changed."""
    if not is_identity_grade(space=space, item=item):
        return False
    line = _one_line(item.text)
    if not line:
        return False
    block = get_block(space=space, label="user")
    lines = entries(block.text)
    if line in lines:
        return False
    old = MemoryItem.objects.filter(space=space, superseded_by=item)
    pred = _pred(item.predicate)
    if pred in IDENTITY_PREDICATES:
        old = old | MemoryItem.objects.filter(
            space=space, subject=item.subject, predicate=item.predicate
        ).exclude(pk=item.pk)
    old_lines = {_one_line(t) for t in old.values_list("text", flat=True)}
    replaced = [existing for existing in lines if existing in old_lines]
    if replaced:
        result = save(
            space=space,
            label="user",
            action="replace",
            text=line,
            old_text=replaced[0],
            author="pipeline",
        )
        # Any further stale values of the same predicate go too.
        for stale in replaced[1:]:
            if result.ok:
                save(
                    space=space,
                    label="user",
                    action="remove",
                    text="",
                    old_text=stale,
                    author="pipeline",
                )
    else:
        result = save(space=space, label="user", action="add", text=line, author="pipeline")
    if not result.ok:
        log.info("core proposal for item %s not applied: %s", item.pk, result.message)
    return result.changed


def follow_fact(*, space: Space, item: MemoryItem, successor: MemoryItem | None = None) -> bool:
    """Core memory follows the facts: when a fact stops being true, the user
    block's line for it is replaced by its successor's line (when that one
    is current and not there yet) or removed, as a new version that says
    why. Returns whether the block changed."""
    line = _one_line(item.text)
    block = get_block(space=space, label="user")
    lines = entries(block.text)
    if not line or line not in lines:
        return False
    new_line = _one_line(successor.text) if successor is not None and successor.is_live else ""
    if new_line and new_line not in lines:
        result = save(
            space=space,
            label="user",
            action="replace",
            text=new_line,
            old_text=line,
            author="pipeline",
            why=f"fact {item.pk} superseded by {successor.pk if successor else ''}",
        )
        if result.ok:
            return result.changed
    result = save(
        space=space,
        label="user",
        action="remove",
        text="",
        old_text=line,
        author="pipeline",
        why=f"fact {item.pk} " + ("superseded" if successor is not None else "no longer true"),
    )
    return result.changed
