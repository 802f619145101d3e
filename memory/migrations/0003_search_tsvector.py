"""PostgreSQL only: a stored generated tsvector column with a GIN index on
each searchable table, so ranking reads a parsed vector instead of running
to_tsvector over every matching row. Nothing happens on SQLite (FTS5 keeps its
own index). The SQL lives in memory/search/_pg.py; the column is not part of
the Django models."""

from django.db import migrations

TARGETS = ("item", "turn", "summary")


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    from memory.search import _pg

    for target in TARGETS:
        for statement in _pg.create_column_sql(target):
            schema_editor.execute(statement)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    from memory.search import _pg

    for target in TARGETS:
        for statement in _pg.drop_column_sql(target):
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("memory", "0002_search_indexes")]
    operations = [migrations.RunPython(create, drop)]
