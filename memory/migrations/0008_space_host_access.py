"""Space.host_access: which spaces may see the server host. Off for every
space but the default one, which is the operator's own."""

from django.db import migrations, models


def default_space_sees_the_host(apps, schema_editor):  # type: ignore[no-untyped-def]
    Space = apps.get_model("memory", "Space")
    Space.objects.filter(name="default").update(host_access=True)


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0007_retractions"),
    ]

    operations = [
        migrations.AddField(
            model_name="space",
            name="host_access",
            field=models.BooleanField(
                default=False,
                help_text="Keys of this space may see the server host's environment and check paths on it.",
            ),
        ),
        migrations.RunPython(default_space_sees_the_host, migrations.RunPython.noop),
    ]
