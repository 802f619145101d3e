"""Request and response schemas of the environment API."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from ninja import Schema
from pydantic import Field, field_validator

_SHORT = 255
_PATH = 1024


class DriveIn(Schema):
    mount: str = Field(min_length=1, max_length=_PATH)
    fstype: str = Field(default="", max_length=40)
    total_gb: float | None = Field(default=None, ge=0, le=10_000_000)
    free_gb: float | None = Field(default=None, ge=0, le=10_000_000)
    letter: str | None = Field(default=None, pattern=r"^[A-Za-z]$")


class EnvironmentReportIn(Schema):
    """The host an agent runs on, in the probe's own vocabulary."""

    hostname: str = Field(min_length=1, max_length=_SHORT)
    os: Literal["Windows", "macOS", "Linux"]
    os_version: str = Field(default="", max_length=_SHORT)
    user: str = Field(default="", max_length=_SHORT)
    home: str = Field(min_length=1, max_length=_PATH)
    is_wsl: bool = False
    wsl_distro: str = Field(default="", max_length=_SHORT)
    wsl_distros: list[str] = Field(default_factory=list, max_length=32)
    drives: list[DriveIn] = Field(default_factory=list, max_length=64)
    folders: dict[str, str] = Field(default_factory=dict)
    shell: str = Field(default="", max_length=_SHORT)
    python: str = Field(default="", max_length=40)
    cpu_count: int | None = Field(default=None, ge=1, le=100_000)
    ram_gb: float | None = Field(default=None, ge=0, le=1_000_000)
    temp: str = Field(default="", max_length=_PATH)
    path_dirs: list[str] = Field(default_factory=list, max_length=256)
    binaries: dict[str, str] = Field(default_factory=dict)

    @field_validator("folders", "binaries")
    @classmethod
    def _bounded_map(cls, value: dict[str, str]) -> dict[str, str]:
        if len(value) > 200:
            raise ValueError("at most 200 entries")
        for k, v in value.items():
            if not k or len(k) > 100 or len(v) > _PATH:
                raise ValueError("keys need 1-100 characters and values at most 1024")
        return value

    @field_validator("path_dirs", "wsl_distros")
    @classmethod
    def _bounded_items(cls, value: list[str]) -> list[str]:
        if any(len(v) > _PATH for v in value):
            raise ValueError("entries must be at most 1024 characters")
        return value


class EnvironmentOut(Schema):
    id: int
    source: str
    hostname: str
    created_at: datetime
    data: dict[str, Any]
    drift: dict[str, Any]
    block: str


class ResolvePathIn(Schema):
    path: str = Field(min_length=1, max_length=4096)
    host: str | None = Field(
        default=None,
        max_length=_SHORT,
        description='"server" for the server host, an agent-reported hostname, or omitted '
        "for the space's default host",
    )


class ResolvePathOut(Schema):
    path: str
    exists: bool | None
    reason: str


class FindBinaryIn(Schema):
    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._+-]+$")
    host: str | None = Field(default=None, max_length=_SHORT)


class FindBinaryOut(Schema):
    name: str
    path: str | None
    searched: list[str]
