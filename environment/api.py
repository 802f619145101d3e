"""The environment API (L5): the host snapshot, agent reports and path assist."""

from __future__ import annotations

from typing import Any

from ninja import Router

from engram_site.openapi import raises
from engram_site.types import SpaceRequest
from environment import paths, services
from environment.models import EnvironmentSnapshot
from environment.schemas import (
    EnvironmentOut,
    EnvironmentReportIn,
    FindBinaryIn,
    FindBinaryOut,
    ResolvePathIn,
    ResolvePathOut,
)
from memory.errors import Invalid

router = Router(tags=["environment"])


def _out(snap: EnvironmentSnapshot) -> dict[str, Any]:
    return {
        "id": snap.pk,
        "source": snap.source,
        "hostname": snap.hostname,
        "created_at": snap.created_at,
        "data": snap.data,
        "drift": snap.drift,
        "block": services.render_environment(snap.data),
    }


@router.get("/environment", response=EnvironmentOut)
@raises(403, 404)  # host_access: the server host is not this space's to see
def get_environment(request: SpaceRequest, host: str | None = None) -> dict[str, Any]:
    """The host this space's prompts describe, with drift since the previous snapshot."""
    return _out(services.current_snapshot(space=request.space, host=host))


@router.post("/environment/refresh", response=EnvironmentOut)
@raises(403)
def refresh_environment(request: SpaceRequest) -> dict[str, Any]:
    """Probe the server host now (spaces with host access only: 403 otherwise)."""
    services.require_host_access(request.space)
    return _out(services.refresh_probe())


@router.post("/environment/report", response=EnvironmentOut)
def report_environment(request: SpaceRequest, payload: EnvironmentReportIn) -> dict[str, Any]:
    """An agent reports the machine it runs on; it becomes this space's default host."""
    data = payload.model_dump()
    data["drives"] = [d.model_dump(exclude_none=True) for d in payload.drives]
    snap = services.report_environment(space=request.space, data=data)
    return _out(snap)


@router.post("/environment/resolve-path", response=ResolvePathOut)
@raises(403, 404)
def resolve_path(request: SpaceRequest, payload: ResolvePathIn) -> dict[str, Any]:
    """A path in the host's absolute form. Only on the server host is
    `exists` checked, and only for spaces with host access (403 otherwise)."""
    snap = services.current_snapshot(space=request.space, host=payload.host)
    try:
        result = paths.resolve_path(payload.path, env=snap.data)
    except ValueError as exc:
        raise Invalid(f"path: {exc}") from None
    return {"path": result.path, "exists": result.exists, "reason": result.reason}


@router.post("/environment/find-binary", response=FindBinaryOut)
@raises(403, 404)
def find_binary(request: SpaceRequest, payload: FindBinaryIn) -> dict[str, Any]:
    snap = services.current_snapshot(space=request.space, host=payload.host)
    try:
        found = paths.find_binary(payload.name, env=snap.data)
    except ValueError as exc:
        raise Invalid(f"name: {exc}") from None
    searched, _ = paths.binary_candidates(payload.name, env=snap.data)
    return {"name": payload.name, "path": found, "searched": searched}
