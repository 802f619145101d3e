"""Scopes: a space has a kind (user, project, shared; existing spaces are
user spaces), and a key of a project space may be linked to a user space it
then also reads and, on request, writes."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0010_palace"),
    ]

    operations = [
        migrations.AddField(
            model_name="space",
            name="kind",
            field=models.CharField(
                choices=[("user", "User"), ("project", "Project"), ("shared", "Shared")],
                default="user",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="apikey",
            name="user_space",
            field=models.ForeignKey(
                blank=True,
                limit_choices_to={"kind": "user"},
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="linked_keys",
                to="memory.space",
            ),
        ),
    ]
