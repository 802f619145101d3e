"""SQLite only: covering indexes over the columns full-text search filters
on, so checking a match's space and liveness does not read the whole row. The
SQL lives in memory/search/_fts.py; PostgreSQL filters inside its own index
scan and needs none."""

from django.db import migrations

TARGETS = ("item", "turn")


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    from memory.search import _fts

    for target in TARGETS:
        for statement in _fts.filter_index_sql(target):
            schema_editor.execute(statement)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    from memory.search import _fts

    for target in TARGETS:
        for statement in _fts.drop_filter_index_sql(target):
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("memory", "0003_search_tsvector")]
    operations = [migrations.RunPython(create, drop)]
