"""The rule-based extractor against its labelled corpus
(tests/data/extraction_corpus.jsonl): precision and recall stay above the
thresholds, and no wrong fact ever reaches core memory when the corpus runs
through the real write pipeline."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from memory.evaluation import extraction
from memory.evaluation.extraction import Fact
from memory.models import CoreBlockVersion, IngestJob, MemoryItem
from memory.services.core import entries
from memory.services.pipeline import run_job
from memory.services.turns import TurnData, accept_turns


def test_the_corpus_is_big_and_varied_enough():
    examples = extraction.load()
    assert len(examples) >= 600
    assert sum(1 for ex in examples if not ex.facts) >= 150
    assert len({ex.text for ex in examples}) == len(examples)


def test_the_rule_extractor_meets_the_thresholds():
    report = extraction.evaluate(extraction.load(), extraction.rules_extractor())
    wrong = "\n".join(f"  {fact}  <- {text}" for text, fact in report.wrong)
    assert report.failures() == [], f"{report.failures()}\nwrong facts:\n{wrong}"


@pytest.mark.parametrize(
    ("got", "want", "same"),
    [
        (Fact("user", "works_at", "the BBC"), Fact("user", "works_at", "BBC"), True),
        (Fact("my mum", "lives_in", "Leeds"), Fact("my mom", "lives_in", "leeds"), True),
        (Fact("Anna", "lives_in", "Kraków"), Fact("anna", "lives_in", "Krakow"), True),
        (Fact("user", "lives_in", "Lisbon", True), Fact("user", "lives_in", "Lisbon"), False),
        (Fact("user", "lives_in", "Lisbon"), Fact("Anna", "lives_in", "Lisbon"), False),
        (
            Fact("user", "lives_in", "Hamburg, in a small flat"),
            Fact("user", "lives_in", "Hamburg"),
            False,
        ),
        (
            Fact("user", "event", "ran my first marathon"),
            Fact("user", "event", "ran first marathon"),
            True,
        ),
        (Fact("user", "event", "ran a 10k"), Fact("user", "event", "ran first marathon"), False),
    ],
)
def test_facts_match_on_subject_predicate_normalized_object_and_retract(got, want, same):
    assert extraction.same_fact(got, want) is same


def test_fact_classes():
    assert extraction.fact_class(Fact("user", "lives_in", "Lisbon")) == "home"
    assert extraction.fact_class(Fact("Anna", "lives_in", "Lisbon")) == "people"
    assert extraction.fact_class(Fact("user", "sister", "Anna")) == "people"
    assert extraction.fact_class(Fact("user", "works_at", "", True)) == "retraction"
    assert extraction.fact_class(Fact("user", "favorite_food", "ramen")) == "preference"


def test_the_command_prints_figures_and_every_wrong_fact(tmp_path: Path):
    corpus = tmp_path / "corpus.jsonl"
    rows = [
        {
            "text": "I live in Lisbon and I work at Initech.",
            "facts": [{"subject": "user", "predicate": "lives_in", "object": "Lisbon"}],
            "class": "home",
        },
        {"text": "Write me a poem about autumn.", "facts": [], "class": "none"},
        {
            "text": "My dog Max loves the beach.",
            "facts": [{"subject": "user", "predicate": "cat", "object": "Max"}],
            "class": "pets",
        },
    ]
    corpus.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    out = StringIO()
    call_command("eval_extraction", str(corpus), "--missed", stdout=out)
    text = out.getvalue()
    assert "3 sentences" in text
    overall = next(line for line in text.splitlines() if line.startswith("overall"))
    # extracted 3 (Lisbon, Initech, dog Max), 1 right; labelled 2, 1 found
    assert overall.split()[1:5] == ["3", "1", "2", "1"]
    assert "user works_at 'Initech'  <- I live in Lisbon" in text
    assert "user dog 'Max'  <- My dog Max" in text
    assert "missed facts (1):" in text and "user cat 'Max'" in text
    assert "below threshold" in text


def test_a_bad_corpus_line_is_reported(tmp_path: Path):
    corpus = tmp_path / "bad.jsonl"
    corpus.write_text('{"text": "hi", "facts": [{"object": "x"}]}\n', encoding="utf-8")
    with pytest.raises(Exception, match="bad.jsonl:1"):
        call_command("eval_extraction", str(corpus), stdout=StringIO())


@pytest.mark.django_db
def test_no_wrong_fact_reaches_core_memory(space):
    """The whole corpus as one user's turns through the write pipeline:
    every line the user block ever held is a labelled fact of the turn that
    said it."""
    examples = extraction.load()
    batch = [
        TurnData(
            session_id=f"s{i // 25}",
            role="user",
            text=ex.text,
            ts=extraction.CORPUS_NOW + timedelta(minutes=i),
            ref=f"c{i}",
        )
        for i, ex in enumerate(examples)
    ]
    for start in range(0, len(batch), 200):
        accept_turns(space=space, turns=batch[start : start + 200])
    for job_id in IngestJob.objects.filter(space=space, status="pending").values_list(
        "id", flat=True
    ):
        run_job(job_id)

    lines = {
        line
        for text in CoreBlockVersion.objects.filter(
            block__space=space, block__label="user"
        ).values_list("text", flat=True)
        for line in entries(text)
    }
    assert len(lines) >= 20  # the run did write to core memory
    wrong = []
    for line in lines:
        items = MemoryItem.objects.filter(space=space, text=line, subject="user")
        assert items, f"core line without a fact: {line!r}"
        for item in items:
            labels = [
                want
                for ref in item.source_turn_refs
                for want in examples[int(ref.removeprefix("c"))].facts
            ]
            got = Fact(item.subject, item.predicate, item.object)
            if not any(extraction.same_fact(got, want) for want in labels):
                wrong.append(
                    f"{line!r} from {[examples[int(r[1:])].text for r in item.source_turn_refs]}"
                )
    assert wrong == []
