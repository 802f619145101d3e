from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from engram_site import checks  # noqa: F401  (registers system checks)
        from memory.screening.redaction import enabled_kinds

        enabled_kinds()  # an unknown ENGRAM_REDACT kind stops start-up, not the first write
