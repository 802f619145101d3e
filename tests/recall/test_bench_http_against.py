"""bench_http --against and --checkout: two servers started as ./run starts
them, the second with the given environment on top or run from another
checkout, loaded in turn round by round, with the ratio of their
throughput."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.integration import workers

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(300),
]

ROUND = re.compile(
    r"round (\d+): A +([\d.]+)/s p95 +[\d.]+ ms(.*?)  B +([\d.]+)/s p95 +[\d.]+ ms(.*?)  B/A ([\d.]+)"
)


def _two_rounds(**options: object) -> str:
    """bench_http's output for two short rounds of recall on a small space."""
    out = io.StringIO()
    call_command(
        "bench_http",
        items=300,
        turns=300,
        endpoint="recall",
        concurrency=2,
        warmup=1,
        seconds=1,
        rounds=2,
        stdout=out,
        **options,
    )
    return out.getvalue()


def test_both_servers_are_loaded_in_turn_and_only_b_gets_the_overrides(monkeypatch) -> None:
    # The servers must open this test's database.
    monkeypatch.setenv("ENGRAM_DATABASE_URL", workers.database_url())
    # B alone answers most of its requests 429: proof the variables reached
    # B's processes and not A's.
    text = _two_rounds(against="ENGRAM_RATE_LIMIT=5/min")
    rounds = ROUND.findall(text)
    assert [r[0] for r in rounds] == ["1", "2"], text
    for _, a, a_notes, b, b_notes, ratio in rounds:
        assert float(a) > 0 and float(b) > 0
        assert float(ratio) == pytest.approx(float(b) / float(a), abs=0.001)
        assert "non-200" not in a_notes and "errors" not in a_notes
        assert "non-200" in b_notes
    assert re.search(
        r"B/A requests/s: median [\d.]+ \(min [\d.]+, max [\d.]+; B ahead in \d of 2 rounds\)", text
    )


# What a server needs of a checkout: the code, its templates and messages.
CHECKOUT = (
    "manage.py",
    "engram_site",
    "memory",
    "environment",
    "consolidation",
    "templates",
    "locale",
)


def test_b_runs_the_code_of_the_checkout_it_is_given(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("ENGRAM_DATABASE_URL", workers.database_url())
    checkout = tmp_path / "other"
    checkout.mkdir()
    for name in CHECKOUT:
        source = Path(settings.BASE_DIR) / name
        if source.is_dir():
            shutil.copytree(source, checkout / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, checkout / name)
    # The other checkout's recall answers 503: only B's rounds may show it.
    api = checkout / "memory" / "api" / "recall.py"
    api.write_text(
        api.read_text().replace(
            "    return recall_json(_answer(request, payload))",
            '    return HttpResponse(b"{}", status=503, content_type="application/json")',
            1,
        )
    )
    text = _two_rounds(checkout=checkout)
    assert f"B run from {checkout}" in text
    rounds = ROUND.findall(text)
    assert [r[0] for r in rounds] == ["1", "2"], text
    for _, _, a_notes, _, b_notes, _ in rounds:
        assert "non-200" not in a_notes and "non-200" in b_notes


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"against": "ENGRAM_WEB_THREADS"}, "is not NAME=VALUE"),
        ({"against": ""}, "needs at least one"),
        ({"against": "X='1"}, "No closing quotation"),
        ({"against": "X=1", "url": "http://127.0.0.1:1", "key": "k"}, "leave out --url"),
        ({"checkout": Path("/"), "url": "http://127.0.0.1:1", "key": "k"}, "leave out --url"),
        ({"checkout": Path("/")}, "is not a checkout of Engram"),
        ({"against": "X=1", "rounds": 0}, "at least 1"),
    ],
)
def test_bad_options_are_refused_before_anything_starts(options, message) -> None:
    with pytest.raises(CommandError, match=message):
        call_command("bench_http", **options)
