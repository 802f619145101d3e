"""Skills (L4): GET/POST /api/v1/skills, GET|PATCH|DELETE /api/v1/skills/{id}.
Drafts are created disabled; enabling one is a person accepting it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ninja import Query, Router, Schema
from pydantic import Field

from engram_site.bounds import DbInt
from engram_site.openapi import raises
from engram_site.types import SpaceRequest
from memory.models import Skill
from memory.services import skills as service

router = Router(tags=["skills"])


class SkillIn(Schema):
    name: str = Field(min_length=1, max_length=120)
    description: str = Field(default="", max_length=2000)
    body: str = Field(default="", max_length=64_000)
    enabled: bool = False
    draft: bool = Field(default=False, description="A proposal: stays disabled until enabled.")


class SkillPatch(Schema):
    name: str | None = Field(default=None, min_length=1, max_length=120)
    description: str | None = Field(default=None, max_length=2000)
    body: str | None = Field(default=None, max_length=64_000)
    enabled: bool | None = None


class SkillOut(Schema):
    id: str
    name: str
    description: str
    body: str
    enabled: bool
    draft: bool
    source: str
    usage_count: int
    last_used_at: datetime | None
    created_at: datetime
    updated_at: datetime
    skill_md: str


class SkillsQuery(Schema):
    enabled: bool | None = None
    draft: bool | None = None
    q: str = Field(default="", max_length=500)


class SkillList(Schema):
    skills: list[SkillOut]


def _out(skill: Skill) -> dict[str, Any]:
    return {
        "id": str(skill.pk),
        "name": skill.name,
        "description": skill.description,
        "body": skill.body,
        "enabled": skill.enabled,
        "draft": skill.is_draft,
        "source": skill.source,
        "usage_count": skill.usage_count,
        "last_used_at": skill.last_used_at,
        "created_at": skill.created_at,
        "updated_at": skill.updated_at,
        "skill_md": service.skill_md(skill),
    }


def _actor(request: SpaceRequest) -> str:
    return f"api:{request.api_key.prefix}"


@router.get("/skills", response=SkillList)
def list_skills(request: SpaceRequest, params: Query[SkillsQuery]) -> dict[str, Any]:
    rows = service.skills(
        space=request.space, enabled=params.enabled, draft=params.draft, q=params.q
    )
    return {"skills": [_out(s) for s in rows[:500]]}


@router.post("/skills", response={201: SkillOut})
@raises(409)
def create_skill(request: SpaceRequest, payload: SkillIn) -> tuple[int, dict[str, Any]]:
    skill = service.create_skill(
        space=request.space,
        name=payload.name,
        description=payload.description,
        body=payload.body,
        enabled=payload.enabled,
        draft=payload.draft,
        actor=_actor(request),
    )
    return 201, _out(skill)


@router.get("/skills/{skill_id}", response=SkillOut)
def get_skill(request: SpaceRequest, skill_id: DbInt) -> dict[str, Any]:
    return _out(service.get_skill(space=request.space, skill_id=skill_id))


@router.patch("/skills/{skill_id}", response=SkillOut)
@raises(409)
def patch_skill(request: SpaceRequest, skill_id: DbInt, payload: SkillPatch) -> dict[str, Any]:
    skill = service.get_skill(space=request.space, skill_id=skill_id)
    return _out(service.update_skill(skill=skill, actor=_actor(request), **payload.dict()))


@router.delete("/skills/{skill_id}", response={204: None})
def delete_skill(request: SpaceRequest, skill_id: DbInt) -> tuple[int, None]:
    skill = service.get_skill(space=request.space, skill_id=skill_id)
    service.delete_skill(skill=skill, actor=_actor(request))
    return 204, None
