"""Import jobs reuse the ingest outbox: IngestJob gains the payload an
import job carries and the progress it reports."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0008_space_host_access"),
    ]

    operations = [
        migrations.AddField(
            model_name="ingestjob",
            name="payload",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="ingestjob",
            name="progress",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
