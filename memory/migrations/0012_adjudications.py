"""Adjudications: what the write judge was asked and said (memory/services/pipeline/judge.py)."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0011_scopes'),
    ]

    operations = [
        migrations.CreateModel(
            name='Adjudication',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(choices=[('band', 'Uncertain band (merge / accept / defer)'), ('contradiction', 'Contradiction confirmation')], max_length=20)),
                ('candidate_text', models.TextField()),
                ('neighbour_ids', models.JSONField(blank=True, default=list)),
                ('similarity', models.FloatField(default=0.0)),
                ('rules_action', models.CharField(max_length=10)),
                ('verdict', models.CharField(blank=True, max_length=20)),
                ('action', models.CharField(blank=True, max_length=10)),
                ('judge_used', models.BooleanField(default=False)),
                ('judge', models.CharField(blank=True, max_length=100)),
                ('elapsed_ms', models.FloatField(default=0.0)),
                ('fallback_reason', models.CharField(blank=True, max_length=300)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('item', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='adjudications', to='memory.memoryitem')),
                ('space', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='adjudications', to='memory.space')),
            ],
            options={
                'ordering': ['-created_at', '-id'],
                'indexes': [models.Index(fields=['space', '-id'], name='adjudication_space_idx')],
            },
        ),
    ]
