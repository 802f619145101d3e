from django.apps import AppConfig


class ConsolidationConfig(AppConfig):
    name = "consolidation"
    verbose_name = "Consolidation"
    default_auto_field = "django.db.models.BigAutoField"
