"""Imports every tool module so each registers its tools, in manifest order."""

from memory.tools import (  # noqa: F401
    search,
    write,
    browse,
    care,
    profile,
    guide,
)
