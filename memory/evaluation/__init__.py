"""Retrieval-quality evaluations run by management commands."""
