"""POST /recall serialises its answer directly (memory.api.recall.recall_json):
it must say exactly what the documented RecallOut schema says, for every
result type (test_recall_api checks the answer over HTTP)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from ninja.responses import NinjaJSONEncoder

from memory.api.recall import RecallOut, recall_json
from memory.services.recall import RecallResponse, Result, Source


def _result(type_: str, source: Source, **extra: object) -> Result:
    base: dict[str, object] = {
        "id": "12",
        "type": type_,
        "text": "Anna moved to Lisbon.",
        "score": 1,  # an int where the schema says float
        "channels": {"bm25_turns": 1, "graph": 0.25},
        "created_at": datetime(2026, 3, 1, 9, 30, 5, 123456, tzinfo=UTC),
        "valid_from": datetime(2026, 2, 28, tzinfo=UTC),
        "valid_to": None,
        "source": source,
    }
    base.update(extra)
    return Result(**base)  # type: ignore[arg-type]


RESULTS = [
    _result("fact", Source("s1", ["D1:3"]), current=True, space="proj"),
    _result(
        "fact",
        Source(None, []),
        current=False,
        superseded_by="40",
        valid_to=datetime(2026, 3, 2, 1, 2, 3, tzinfo=UTC),
    ),
    _result("turn", Source("s1", ["D1:4"]), superseded_by="retracted"),
    _result("summary", Source("s2", [])),
    _result("skill", Source(None, ["r1", "r2"])),
    _result("doc", Source(None, [], document_id="7", title="Guide", path="a/b.md", section="X")),
    _result("doc", Source(None, [], document_id="8")),
    _result("provider", Source(None, [], provider="mem0", provider_id=None)),
    _result("provider", Source(None, [], provider="mem0", provider_id="abc")),
]


def _by_schema(response: RecallResponse) -> str:
    dumped = RecallOut.model_validate(response).model_dump()
    return _canon(json.dumps(dumped, cls=NinjaJSONEncoder))


def _canon(text: str | bytes) -> str:
    # Key order aside, the same text: 1 and 1.0 stay apart.
    return json.dumps(json.loads(text), sort_keys=True)


@pytest.mark.parametrize("result", RESULTS, ids=lambda r: f"{r.type}-{r.source}")
def test_each_result_type_says_what_the_schema_says(result: Result) -> None:
    response = RecallResponse([result], took_ms=3, degraded=["vector"])
    direct = recall_json(response)
    assert direct["Content-Type"] == "application/json; charset=utf-8"
    assert _canon(direct.content) == _by_schema(response)


def test_an_empty_answer_too() -> None:
    response = RecallResponse([], took_ms=0.5)
    assert _canon(recall_json(response).content) == _by_schema(response)
