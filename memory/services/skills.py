"""Skills (L4) as an API: SKILL.md-shaped procedures (name, description,
body). A draft the consolidator proposes stays disabled until a person
enables it; agents only ever see enabled skills."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from memory.errors import Conflict, Invalid, NotFound
from memory.models import Skill, Space
from memory.screening import redact, screen
from memory.services import audit
from memory.services.palace import slots as palace_slots
from memory.services.recall import presence


def skills(
    *, space: Space, enabled: bool | None = None, draft: bool | None = None, q: str = ""
) -> QuerySet[Skill]:
    rows = Skill.objects.filter(space=space)
    if enabled is not None:
        rows = rows.filter(enabled=enabled)
    if draft is not None:
        rows = rows.filter(is_draft=draft)
    for word in q.split()[:8]:
        rows = rows.filter(
            Q(name__icontains=word) | Q(description__icontains=word) | Q(body__icontains=word)
        )
    return rows.order_by("name")


def get_skill(*, space: Space, skill_id: int) -> Skill:
    found = Skill.objects.filter(space=space, pk=skill_id).first()
    if found is None:
        raise NotFound(f"skill {skill_id} not found")
    return found


def create_skill(
    *,
    space: Space,
    name: str,
    description: str = "",
    body: str = "",
    enabled: bool = False,
    draft: bool = False,
    source: str = "api",
    actor: str = "api",
) -> Skill:
    """A person's skill may start enabled; a draft never does."""
    try:
        with transaction.atomic():
            skill = Skill.objects.create(
                space=space,
                name=name.strip(),
                description=redact(description),
                body=redact(body),
                enabled=enabled and not draft,
                is_draft=draft,
                source=source,
            )
            audit.record(
                space=space, action="add", target_type="skill", target_id=skill.pk, actor=actor
            )
            palace_slots.place_skill(skill)
    except IntegrityError:
        raise Conflict(f"name: a skill named {name!r} already exists") from None
    presence.added("skill", space.pk)
    return skill


def update_skill(*, skill: Skill, actor: str, **fields: Any) -> Skill:
    """Edit a skill. Enabling a draft is a person accepting it: it stops being a draft."""
    changed = {k: v for k, v in fields.items() if v is not None}
    for text_field in ("description", "body"):  # a skill is put in prompts: no secrets
        if isinstance(changed.get(text_field), str):
            changed[text_field] = redact(changed[text_field])
    if changed.get("enabled"):
        changed["is_draft"] = False
    for name, value in changed.items():
        setattr(skill, name, value)
    skill.updated_at = timezone.now()
    try:
        with transaction.atomic():
            skill.save(update_fields=[*changed, "updated_at"])
            audit.record(
                space=skill.space_id,
                action="edit",
                target_type="skill",
                target_id=skill.pk,
                actor=actor,
                fields=sorted(changed),
            )
    except IntegrityError:
        raise Conflict("name: another skill already has this name") from None
    return skill


def edit_skill(*, skill: Skill, actor: str, name: str, description: str, body: str) -> Skill:
    """A curator's edit of a skill's text: screened like any write that
    reaches a prompt (the injection screen, not the strict one: a procedure
    may well say to run a command), then saved and audited by update_skill.
    Raises Invalid for an empty name or a text the screen flags."""
    name = name.strip()
    if not name or len(name) > 120:
        raise Invalid("name: a skill needs a name of 1 to 120 characters")
    texts = {}
    for field_name, value in (("description", description), ("body", body)):
        screened = screen(value)
        if screened.flagged:
            raise Invalid(
                f"{field_name}: refused by the injection screen ({', '.join(screened.reasons)})"
            )
        texts[field_name] = screened.text
    return update_skill(skill=skill, actor=actor, name=name, **texts)


def delete_skill(*, skill: Skill, actor: str) -> None:
    with transaction.atomic():
        audit.record(
            space=skill.space_id,
            action="delete",
            target_type="skill",
            target_id=skill.pk,
            actor=actor,
            name=skill.name,
        )
        skill.delete()


def skill_md(skill: Skill) -> str:
    """The SKILL.md form: YAML front matter with name and description, then the body."""
    description = skill.description.replace("\n", " ").strip()
    return f"---\nname: {skill.name}\ndescription: {description}\n---\n\n{skill.body.strip()}\n"


def parse_skill_md(text: str) -> tuple[str, str, str]:
    """(name, description, body) of a SKILL.md: YAML front matter with name
    and description, then the body. Raises Invalid without a name."""
    from memory.errors import Invalid

    name, description, body = "", "", text
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        try:
            end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
        except StopIteration:
            raise Invalid("SKILL.md: the front matter is not closed with ---") from None
        for line in lines[1:end]:
            key, _, value = line.partition(":")
            value = value.strip().strip("'\"")
            if key.strip() == "name":
                name = value
            elif key.strip() == "description":
                description = value
        body = "\n".join(lines[end + 1 :]).strip()
    if not name:
        raise Invalid("SKILL.md: the front matter needs a name")
    return name[:120], description, body


def export_folder(*, space: Space, folder: Any) -> int:
    """One folder per skill holding its SKILL.md, the layout agent runtimes load."""
    from pathlib import Path

    from django.utils.text import slugify

    root = Path(folder)
    count = 0
    for skill in skills(space=space):
        target = root / (slugify(skill.name) or f"skill-{skill.pk}")
        target.mkdir(parents=True, exist_ok=True)
        (target / "SKILL.md").write_text(skill_md(skill), encoding="utf-8")
        count += 1
    return count


def import_folder(
    *, space: Space, folder: Any, enable: bool = False, actor: str = "cli"
) -> dict[str, int]:
    """Every */SKILL.md under `folder`: new names are created (disabled
    unless `enable`), known names get the new description and body."""
    from pathlib import Path

    counts = {"created": 0, "updated": 0}
    for path in sorted(Path(folder).glob("*/SKILL.md")):
        name, description, body = parse_skill_md(path.read_text(encoding="utf-8"))
        known = Skill.objects.filter(space=space, name=name).first()
        if known is None:
            create_skill(
                space=space,
                name=name,
                description=description,
                body=body,
                enabled=enable,
                source="import",
                actor=actor,
            )
            counts["created"] += 1
        else:
            update_skill(skill=known, actor=actor, description=description, body=body)
            counts["updated"] += 1
    return counts
