"""Imports every tool module so each registers its tools, in manifest order."""

from memory.tools import (  # noqa: F401
    browse,
    care,
    guide,
    profile,
    search,
    write,
)
