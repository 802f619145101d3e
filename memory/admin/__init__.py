"""Curation in the Django admin. Actions and edits call services; nothing here
holds memory logic of its own. `memory` keeps the memory rules (facts, core
blocks); `general` is everything else; `audited` is the base of both."""

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from memory.admin import general, memory  # noqa: F401  (registers the pages)

# Lazy: translated per request, in the curator's language.
admin.site.site_header = _("Engram administration")
admin.site.site_title = _("Engram admin")
admin.site.index_title = _("Memory curation")
