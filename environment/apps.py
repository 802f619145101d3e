from django.apps import AppConfig


class EnvironmentConfig(AppConfig):
    name = "environment"
    verbose_name = "Environment (L5)"
    default_auto_field = "django.db.models.BigAutoField"
