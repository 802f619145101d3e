from __future__ import annotations

from django.http import HttpRequest
from ninja import Router

from engram_site.types import SpaceRequest
from memory import selectors
from memory.schemas import HealthOut, StatusOut

router = Router(tags=["status"])


@router.get("/health", auth=None, response=HealthOut)
def health(request: HttpRequest) -> dict[str, str]:
    return {"status": "ok"}


@router.get("/status", response=StatusOut)
def status(request: SpaceRequest) -> dict[str, object]:
    return selectors.space_status(space=request.space)
