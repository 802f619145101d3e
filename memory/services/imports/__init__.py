"""Imports into a space: a JSON space export, a {nodes, edges} graph dump
and past conversation logs (history backfill)."""

from memory.services.imports.graph import GraphImportReport, import_graph
from memory.services.imports.space import ImportReport, import_space

__all__ = ["GraphImportReport", "ImportReport", "import_graph", "import_space"]
