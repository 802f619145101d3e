"""System checks report configuration mistakes at start-up."""

from __future__ import annotations

from engram_site.checks import check_engram_settings


def ids(settings) -> set[str]:  # type: ignore[no-untyped-def]
    return {problem.id for problem in check_engram_settings(None)}


def test_it_passes_the_default_configuration(settings):
    assert not {i for i in ids(settings) if i.startswith("engram.E")}


def test_it_reports_malformed_llm_providers(settings):
    settings.ENGRAM = {**settings.ENGRAM, "LLM_PROVIDERS": [{"base_url": "http://x"}]}
    assert "engram.E001" in ids(settings)
    settings.ENGRAM = {**settings.ENGRAM, "LLM_PROVIDERS": {"base_url": "x", "model": "m"}}
    assert "engram.E001" in ids(settings)


def test_it_reports_a_bad_daily_time(settings):
    for bad in ("25:00", "3:60", "noon", "03:30:00"):
        settings.ENGRAM = {**settings.ENGRAM, "CONSOLIDATE_DAILY_AT": bad}
        assert "engram.E002" in ids(settings), bad
    settings.ENGRAM = {**settings.ENGRAM, "CONSOLIDATE_DAILY_AT": "23:59"}
    assert "engram.E002" not in ids(settings)


def test_it_needs_a_url_for_remote_embeddings(settings):
    settings.ENGRAM = {**settings.ENGRAM, "EMBEDDINGS": "ollama", "EMBEDDINGS_URL": ""}
    assert "engram.E003" in ids(settings)
    settings.ENGRAM = {**settings.ENGRAM, "EMBEDDINGS_URL": "http://127.0.0.1:11434"}
    assert "engram.E003" not in ids(settings)


def test_it_warns_about_a_development_secret_key(settings):
    settings.DEBUG = False
    settings.SECRET_KEY = "django-insecure-abc"
    assert "engram.W001" in ids(settings)
