"""The memory-quality suite (issue 11): every scenario with the rule-based
extractor and with a good LLM (the fake OpenAI-format server), through the HTTP
API and a real worker; then, over every run, /context never presents an ended
fact, or a turn stating one, as current."""

from __future__ import annotations

import pytest

from tests.quality.harness import EXTRACTORS, Stack, final_state, run_scenario
from tests.quality.scenarios import SCENARIOS

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(600),
]


@pytest.mark.parametrize("extractor", EXTRACTORS)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_scenario(stack: Stack, scenario, extractor: str) -> None:  # type: ignore[no-untyped-def]
    asked = len(stack.llm.requests)
    run = run_scenario(stack, scenario, extractor)
    if extractor == "llm" and any(t.facts for t in scenario.turns):
        assert len(stack.llm.requests) > asked, "the llm worker never asked the fake LLM"
    used = run.extractors_used()
    assert used <= {extractor}, f"the {extractor} run was extracted by {used}"
    if extractor == "llm":
        missed = [t for t in stack.good.misses if t in {s.text for s in scenario.turns}]
        assert not missed, f"turns the fake LLM has no script for: {missed}"
    assert not run.failures, (
        f"{scenario.name} [{extractor}]: {scenario.about}\n"
        + "\n".join(run.failures)
        + "\nstored:\n"
        + run.dump()
    )


@pytest.mark.parametrize("extractor", EXTRACTORS)
def test_context_never_presents_the_past_as_now(stack: Stack, extractor: str) -> None:
    problems: list[str] = []
    seen = 0
    for scenario in SCENARIOS:
        run = stack.runs.get((scenario.name, extractor))
        if run is None:  # selected on its own: write the scenario first
            run = run_scenario(stack, scenario, extractor, checks=False)
        problems += [f"{scenario.name}: {p}" for p in run.context_truth()]
        seen += run.stale_seen
    assert not problems, "\n".join(problems)
    # The check means something only if /context did show the past: stale
    # turns and former facts, labelled as such, in most scenarios that have any.
    with_past = sum(bool(s.stale_turns()) for s in SCENARIOS)
    assert seen >= with_past, f"only {seen} stale entries shown over {with_past} scenarios"


BACKFILLS = [s for s in SCENARIOS if s.name.startswith("backfill_") and "_in_order" not in s.name]
BY_NAME = {s.name: s for s in SCENARIOS}


@pytest.mark.parametrize("extractor", EXTRACTORS)
@pytest.mark.parametrize("scenario", BACKFILLS, ids=lambda s: s.name)
def test_backfill_equals_in_order(stack: Stack, scenario, extractor: str) -> None:  # type: ignore[no-untyped-def]
    states = []
    for sc in (scenario, BY_NAME[f"{scenario.name}_in_order"]):
        run = stack.runs.get((sc.name, extractor)) or run_scenario(
            stack, sc, extractor, checks=False
        )
        states.append(final_state(run))
    assert states[0] == states[1], f"backfilled: {states[0]}\nin order:   {states[1]}"
