"""Date formats that differ from Django's own per language (FORMAT_MODULE_PATH)."""
