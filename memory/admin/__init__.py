"""Curation in the Django admin. Actions and edits call services; nothing here
holds memory logic of its own. `memory` keeps the memory rules (facts, core
blocks); `general` is everything else; `audited` is the base of both."""

from memory.admin import general, memory  # noqa: F401  (registers the pages)
