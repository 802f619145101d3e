"""Full-text indexes: FTS5 tables + sync triggers on SQLite, expression GIN
indexes on PostgreSQL. The SQL itself lives in memory/search."""

from django.db import migrations

TARGETS = ("item", "turn", "summary")


def _backend(schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        from memory.search import _pg as backend
    else:
        from memory.search import _fts as backend
    return backend


def create(apps, schema_editor):
    backend = _backend(schema_editor)
    for target in TARGETS:
        for statement in backend.create_sql(target):
            schema_editor.execute(statement)


def drop(apps, schema_editor):
    backend = _backend(schema_editor)
    for target in TARGETS:
        for statement in backend.drop_sql(target):
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("memory", "0001_initial")]
    operations = [migrations.RunPython(create, drop)]
