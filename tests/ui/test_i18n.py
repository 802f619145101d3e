"""The dashboard in English, 中文 and Русский: complete catalogues, compiled
files in step with them, translated pages with localised dates, and an API
that stays English whatever Accept-Language says."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.utils import formats, timezone, translation

from engram_site import i18n

PAGE_LANGUAGES = [
    # (Accept-Language, <html lang>, a string of /core/, a string of /ask/)
    ("zh-hans", "zh-hans", "核心记忆", "向记忆提问"),
    ("ru", "ru", "Основная память", "Спросить память"),
]


@pytest.fixture(scope="module")
def sources() -> dict[i18n.Key, str | None]:
    return i18n.source_msgids()


# (a) complete catalogues -------------------------------------------------


@pytest.mark.parametrize("language", i18n.LANGUAGES)
def test_every_entry_is_translated_and_not_fuzzy(language):
    entries = i18n.parse_po(i18n.catalogue_path(language))
    assert entries, f"{language} catalogue is empty"
    bad = [e.msgid for e in entries if not e.translated]
    assert bad == [], f"{language}: untranslated or fuzzy: {bad}"


@pytest.mark.parametrize("language", i18n.LANGUAGES)
def test_every_string_of_the_sources_is_in_the_catalogue(language, sources):
    keys = {e.key for e in i18n.parse_po(i18n.catalogue_path(language))}
    missing = sorted(str(k) for k in set(sources) - keys)
    assert missing == [], f"{language} lacks {missing}; run scripts/i18n.sh and translate"
    # Nothing stale either: an entry no source asks for is a leftover.
    assert sorted(str(k) for k in keys - set(sources)) == []


def test_the_extraction_sees_templates_and_python(tmp_path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "x.html").write_text(
        "{% load i18n %}{% translate 'Brand new' %}"
        "{% blocktranslate count n=k %}{{ n }} apple{% plural %}{{ n }} apples{% endblocktranslate %}"
        "{% translate 'Pear' context 'fruit' %}"
    )
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "x.py").write_text(
        "from django.utils.translation import gettext as _, ngettext, pgettext_lazy\n"
        "_('Hello %(name)s')\nngettext('one cat', 'many cats', 2)\npgettext_lazy('tree', 'Pear')\n"
    )
    found = i18n.source_msgids(tmp_path)
    assert found == {
        (None, "Brand new"): None,
        (None, "%(n)s apple"): "%(n)s apples",
        ("fruit", "Pear"): None,
        (None, "Hello %(name)s"): None,
        (None, "one cat"): "many cats",
        ("tree", "Pear"): None,
    }
    # A new source string the catalogue lacks is reported.
    assert any("missing" in line and "Brand new" in line for line in i18n.problems("ru", found))


# (b) the committed .mo files are compiled from the .po files ---------------


@pytest.mark.parametrize("language", i18n.LANGUAGES)
def test_the_compiled_catalogue_is_up_to_date(language):
    assert i18n.stale_mo(language) == []


def test_a_stale_compiled_catalogue_is_noticed(tmp_path, settings):
    shutil.copytree(Path(settings.BASE_DIR) / "locale", tmp_path / "locale")
    po = tmp_path / "locale" / "ru" / "LC_MESSAGES" / "django.po"
    po.write_text(po.read_text().replace('msgstr "Сохранить"', 'msgstr "Записать"'))
    settings.BASE_DIR = tmp_path
    assert i18n.stale_mo("ru") != []


# (e) placeholders and HTML survive translation ---------------------------


@pytest.mark.parametrize("language", i18n.LANGUAGES)
def test_the_catalogues_have_no_problems(language, sources):
    assert i18n.problems(language, sources) == []


@pytest.mark.parametrize(
    ("good", "bad"),
    [
        ('msgstr "Не сохранено: %(detail)s"', 'msgstr "Не сохранено: %(detali)s"'),
        ('"%(results)s результатов за %(ms)s мс"', '"%(results)s результатов за мс"'),
        (
            '"Память активна · <b>%(facts)s</b> факт"',
            '"Память активна · %(facts)s факт"',
        ),
    ],
)
def test_a_wrong_placeholder_or_tag_in_a_translation_fails(tmp_path, settings, good, bad):
    shutil.copytree(Path(settings.BASE_DIR) / "locale", tmp_path / "locale")
    po = tmp_path / "locale" / "ru" / "LC_MESSAGES" / "django.po"
    text = po.read_text()
    assert good in text
    po.write_text(text.replace(good, bad))
    settings.BASE_DIR = tmp_path
    lines = i18n.problems("ru")
    assert any("placeholders" in line or "HTML" in line for line in lines), lines


def test_placeholders_are_read_like_python_does():
    assert i18n.placeholders("%(a)s of %(b)d (%(p)s%%)") == ["%%", "%(a)s", "%(b)d", "%(p)s"]


# (c) translated pages -----------------------------------------------------


def _localised(value, fmt: str, language: str) -> str:
    with translation.override(language):
        return formats.date_format(timezone.localtime(value), fmt)


@pytest.mark.django_db
@pytest.mark.parametrize(("accept", "lang", "core_text", "ask_text"), PAGE_LANGUAGES)
def test_core_is_translated_with_localised_dates(
    staff_client, space, accept, lang, core_text, ask_text
):
    from memory.models import CoreBlockVersion

    staff_client.get("/core/")
    saved = staff_client.post(
        "/core/user/edit/",
        {"text": "Name: Sam", "expected_version": "0"},
        HTTP_ACCEPT_LANGUAGE=accept,
        follow=True,
    ).content.decode()
    body = staff_client.get("/core/", HTTP_ACCEPT_LANGUAGE=accept).content.decode()
    assert f'<html lang="{lang}">' in body
    assert core_text in body and "Core memory" not in body
    # The message made in the view is translated too.
    assert {"zh-hans": "第 1 版", "ru": "как версия 1"}[accept] in saved
    version = CoreBlockVersion.objects.filter(block__space=space).latest("version")
    stamp = _localised(version.created_at, "SHORT_DATETIME_FORMAT", accept)
    assert stamp in body
    iso = timezone.localtime(version.created_at).strftime("%Y-%m-%d %H:%M")
    assert iso not in body


@pytest.mark.django_db
@pytest.mark.parametrize(("accept", "lang", "core_text", "ask_text"), PAGE_LANGUAGES)
def test_ask_is_translated_with_localised_dates_and_numbers(
    staff_client, memory, accept, lang, core_text, ask_text
):
    body = staff_client.get("/ask/?q=Anna+lives", HTTP_ACCEPT_LANGUAGE=accept).content.decode()
    assert f'<html lang="{lang}">' in body
    assert ask_text in body and "Ask memory" not in body
    assert _localised(memory["new"].created_at, "SHORT_DATE_FORMAT", accept) in body
    if accept == "ru":
        assert re.search(r"\d+,\d мс", body), "the decimal comma of Russian"
        assert "известно с" in body
    else:
        assert "毫秒" in body and "起已知" in body
    bad = staff_client.get("/ask/?q=Anna&as_of=nope", HTTP_ACCEPT_LANGUAGE=accept)
    assert {"zh-hans": "必须是日期", "ru": "должны быть датой"}[accept] in bad.content.decode()


@pytest.mark.django_db
def test_english_stays_the_default_with_iso_dates(staff_client, space):
    staff_client.post("/core/user/edit/", {"text": "Name: Sam", "expected_version": "0"})
    body = staff_client.get("/core/").content.decode()
    assert '<html lang="en">' in body and "Core memory" in body
    from memory.models import CoreBlockVersion

    version = CoreBlockVersion.objects.filter(block__space=space).latest("version")
    assert timezone.localtime(version.created_at).strftime("%Y-%m-%d %H:%M") in body


@pytest.mark.django_db
@pytest.mark.parametrize(("language", "lang", "core_text", "ask_text"), PAGE_LANGUAGES)
def test_the_language_switch_is_remembered(staff_client, language, lang, core_text, ask_text):
    switched = staff_client.post("/i18n/setlang/", {"language": language, "next": "/core/"})
    assert switched.status_code == 302 and switched["Location"] == "/core/"
    core = staff_client.get("/core/").content.decode()
    assert f'<html lang="{lang}">' in core and core_text in core
    ask = staff_client.get("/ask/").content.decode()
    assert f'<html lang="{lang}">' in ask and ask_text in ask


@pytest.mark.django_db
def test_the_admin_is_branded_and_translated(staff_client):
    assert "Engram administration" in staff_client.get("/admin/").content.decode()
    ru = staff_client.get("/admin/", HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert "Администрирование Engram" in ru and "Управление памятью" in ru


# (d) the API stays English ------------------------------------------------

API_CALLS = [
    ("get", "/api/v1/skills", None),  # an answer with enums
    ("post", "/api/v1/memory/facts", {"text": ""}),  # a validation error
    ("get", "/api/v1/no-such-thing", None),  # Django's 404, made JSON
    ("delete", "/api/v1/skills", None),  # a wrong method
]


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "url", "body"), API_CALLS)
def test_the_api_answers_the_same_in_every_language(api, method, url, body):
    def call(accept: str | None, client: Client = api):  # type: ignore[no-untyped-def]
        extra = {"HTTP_ACCEPT_LANGUAGE": accept} if accept else {}
        if body is None:
            return getattr(client, method)(url, **extra)
        return getattr(client, method)(url, body, content_type="application/json", **extra)

    english = call(None)
    for accept in ("zh-hans", "ru", "ru-RU,ru;q=0.9,en;q=0.5", "zh-CN"):
        answer = call(accept)
        assert (answer.status_code, answer.content) == (english.status_code, english.content)
        assert "Content-Language" not in answer
        assert "accept-language" not in answer.get("Vary", "").lower()
    # Without a key too: the 401 is English.
    anonymous = Client()
    assert call("ru", anonymous).content == call(None, anonymous).content


def test_the_dashboard_languages_are_the_catalogues():
    codes = {code for code, _ in settings.LANGUAGES}
    assert codes == {"en", "zh-hans", "ru"}
    assert {translation.to_locale(c) for c in codes - {"en"}} == set(i18n.LANGUAGES)
