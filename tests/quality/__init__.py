"""The memory-quality suite (issue 11).

scenarios.py holds the conversations and what must be true afterwards, in the
language of dsl.py; harness.py plays them through the HTTP API against real
Celery workers (one with the rule-based extractor, one with the fake
OpenAI-format server answering like a good LLM, tests/fakes/good_llm.py);
test_scenarios.py runs every scenario with both, checks that /context never
presents an ended fact or a turn stating one as current over all of them, and
that every backfill ends in the same state as its in-order twin.

Run it alone with `./test tests/quality` (or `pytest tests/quality -k NAME`).
A new scenario is a Scenario(...) in scenarios.py: its user turns list the facts
a good LLM reads in them, its checks say what the API must answer."""
