"""Edge input answers a 4xx naming the problem, never a 500: integers beyond
64 bits, instants that leave Python's or the databases' range once converted
to UTC, and bodies that are JSON but not objects.

The cases are generated from the OpenAPI schema, so an operation or field
added later is covered without touching this file; the reproducers of the
report that found these (offset=2**63, ts 0001-01-01T00:00:00+14:00, ...) are
spelt out as well, with the free-form inputs no schema describes (imports,
backfill lines, the string valid_from of POST /memory/facts)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engram_site.api import api as ninja_api

HUGE = 2**63  # one past the largest 64-bit integer
EARLY = "0001-01-01T00:00:00+14:00"  # year 0 in UTC
LATE = "9999-12-31T23:59:59-14:00"  # year 10000 in UTC

SCHEMA = ninja_api.get_openapi_schema()
COMPONENTS = SCHEMA["components"]["schemas"]


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = COMPONENTS[node["$ref"].rsplit("/", 1)[-1]]
    return node


def _kinds(node: dict[str, Any]) -> set[str]:
    """'integer' / 'date-time' if the schema (or one of its anyOf) is one."""
    node = _resolve(node)
    found: set[str] = set()
    for option in node.get("anyOf", [node]):
        option = _resolve(option)
        if option.get("type") == "integer":
            found.add("integer")
        if option.get("format") == "date-time":
            found.add("date-time")
    return found


def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, op)
        for path, ops in SCHEMA["paths"].items()
        for method, op in ops.items()
    ]


def _path(path: str, op: dict[str, Any], override: dict[str, Any] | None = None) -> str:
    values = {
        p["name"]: _sample(p["schema"]) for p in op.get("parameters", []) if p["in"] == "path"
    }
    values.update(override or {})
    for name, value in values.items():
        path = path.replace("{" + name + "}", str(value))
    return path


def _sample(node: dict[str, Any]) -> Any:
    node = _resolve(node)
    if "anyOf" in node:
        node = _resolve(node["anyOf"][0])
    if "enum" in node:
        return node["enum"][0]
    return {"integer": 1, "string": "x", "boolean": False, "number": 0.5}.get(
        node.get("type", "string"), "x"
    )


def _body_schema(op: dict[str, Any]) -> dict[str, Any] | None:
    content = op.get("requestBody", {}).get("content", {})
    schema = content.get("application/json", {}).get("schema")
    return _resolve(schema) if schema else None


def _minimal_body(schema: dict[str, Any]) -> dict[str, Any]:
    body = {}
    for name in schema.get("required", []):
        body[name] = _sample(schema["properties"][name])
    return body


def _cases() -> list[Any]:
    cases = []
    for method, path, op in _operations():
        for param in op.get("parameters", []):
            kinds = _kinds(param["schema"])
            where, name = param["in"], param["name"]
            for value in (HUGE, -HUGE - 1) if "integer" in kinds else ():
                cases.append(
                    pytest.param(
                        method, path, op, where, name, value, id=f"{method} {path} {name}={value}"
                    )
                )
            for value in (EARLY, LATE) if "date-time" in kinds else ():
                cases.append(
                    pytest.param(
                        method, path, op, where, name, value, id=f"{method} {path} {name}={value}"
                    )
                )
        schema = _body_schema(op)
        for name, prop in (schema or {}).get("properties", {}).items():
            kinds = _kinds(prop)
            values: tuple[Any, ...] = ()
            if "integer" in kinds:
                values = (HUGE,)
            if "date-time" in kinds:
                values = (EARLY, LATE)
            for value in values:
                cases.append(
                    pytest.param(
                        method,
                        path,
                        op,
                        "body",
                        name,
                        value,
                        id=f"{method} {path} body.{name}={value}",
                    )
                )
    return cases


def _send(
    api: Any,
    method: str,
    path: str,
    op: dict[str, Any],
    *,
    query: dict[str, Any] | None = None,
    path_values: dict[str, Any] | None = None,
    body: Any = None,
) -> Any:
    url = _path(path, op, path_values)
    kwargs: dict[str, Any] = {}
    if body is not None:
        kwargs = {"data": json.dumps(body), "content_type": "application/json"}
    elif query:
        kwargs = {"data": query}
    return getattr(api, method.lower())(url, **kwargs)


def _assert_refused(response: Any, name: str) -> None:
    assert 400 <= response.status_code < 500, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/json")
    assert name in response.json()["detail"], response.json()


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(("method", "path", "op", "where", "name", "value"), _cases())
def test_values_beyond_what_is_stored_are_refused_by_name(
    api, method, path, op, where, name, value
):  # type: ignore[no-untyped-def]
    if where == "body":
        body = _minimal_body(_body_schema(op) or {})
        body[name] = value
        response = _send(api, method, path, op, body=body)
    elif where == "path":
        response = _send(api, method, path, op, path_values={name: value})
    else:
        response = _send(api, method, path, op, query={name: value}, body=None)
    _assert_refused(response, name)


def _body_operations() -> list[Any]:
    return [
        pytest.param(method, path, op, id=f"{method} {path}")
        for method, path, op in _operations()
        if op.get("requestBody") or path.endswith("/tools/{name}")
    ]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(("method", "path", "op"), _body_operations())
@pytest.mark.parametrize("body", [[None, None], 5, "text", None, True], ids=repr)
def test_a_body_that_is_not_an_object_is_refused(api, method, path, op, body):  # type: ignore[no-untyped-def]
    overrides = {"name": "memory_stats"} if path.endswith("/tools/{name}") else None
    url = _path(path, op, overrides)
    response = getattr(api, method.lower())(
        url, data=json.dumps(body), content_type="application/json"
    )
    assert response.status_code == 422, (response.status_code, response.content[:200])
    assert "expected a JSON object" in response.json()["detail"]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(
    "raw, where",
    [
        (b'{"query": "x", "k": 1e400}', "k"),
        (b'{"query": "x", "k": NaN}', "NaN"),
        (b'{"query": "x", "k": -Infinity}', "Infinity"),
        (b'{"query": "x", "types": ["fact"], "k": -9223372036854775809}', "k"),
    ],
)
def test_numbers_json_does_not_have_are_refused(api, raw, where):  # type: ignore[no-untyped-def]
    response = api.post("/api/v1/recall", raw, content_type="application/json")
    assert 400 <= response.status_code < 500
    assert where in response.json()["detail"]


# --- the reproducers, spelt out -----------------------------------------------------------


def test_a_huge_offset_of_consolidation_runs_is_422(api):  # type: ignore[no-untyped-def]
    response = api.get("/api/v1/consolidation/runs?offset=9223372036854775808")
    _assert_refused(response, "offset")
    # The largest offset allowed still runs: offset + limit fit in the SQL.
    assert api.get("/api/v1/consolidation/runs?offset=1000000000").json()["runs"] == []


@pytest.mark.parametrize("ts", [EARLY, LATE])
def test_turns_and_batches_at_the_year_limits_are_422_and_store_nothing(api, ts):  # type: ignore[no-untyped-def]
    from memory.models import Session, Turn

    turn = {"session_id": "edge", "role": "user", "text": "hello", "ts": ts}
    _assert_refused(api.post("/api/v1/turns", turn, content_type="application/json"), "ts")
    response = api.post("/api/v1/turns/batch", {"turns": [turn]}, content_type="application/json")
    _assert_refused(response, "turns.0.ts")
    assert not Turn.objects.exists() and not Session.objects.exists()
    # A day inside the limits is stored and read back as sent.
    inside = "0001-01-02T00:00:00+00:00" if ts == EARLY else "9999-12-30T00:00:00+00:00"
    ok = api.post("/api/v1/turns", {**turn, "ts": inside}, content_type="application/json")
    assert ok.status_code == 202
    assert Turn.objects.get().ts.year == int(inside[:4])


@pytest.mark.parametrize("valid_from", [EARLY, LATE, "0000-01-01", "10000-01-01"])
def test_a_fact_valid_from_beyond_the_limits_is_422(api, valid_from):  # type: ignore[no-untyped-def]
    body = {"text": "Ingrid works at the Bergen observatory", "valid_from": valid_from}
    _assert_refused(
        api.post("/api/v1/memory/facts", body, content_type="application/json"), "valid_from"
    )


def test_an_import_with_a_date_beyond_the_limits_is_422_and_imports_nothing(api):  # type: ignore[no-untyped-def]
    from memory.models import Turn

    export = api.get("/api/v1/export").json()
    export["sessions"] = [
        {
            "external_id": "s-edge",
            "started_at": "2024-01-01T00:00:00+00:00",
            "last_turn_at": "2024-01-01T00:00:00+00:00",
            "turns": [{"role": "user", "text": "hi there", "ts": LATE, "ref": "t1"}],
        }
    ]
    response = api.post("/api/v1/import", export, content_type="application/json")
    _assert_refused(response, "sessions[0].turns[0].ts")
    assert not Turn.objects.exists()


def test_backfill_lines_beyond_the_limits_are_bad_lines_not_errors(api):  # type: ignore[no-untyped-def]
    lines = [
        {"session_id": "b", "role": "user", "text": "first", "ts": EARLY},
        {"session_id": "b", "role": "user", "text": "second", "ts": 1e20},
        {"session_id": "b", "role": "user", "text": "third", "ts": "2024-13-01T00:00:00"},
        {"session_id": "b", "role": "user", "text": "fourth", "ts": "2024-05-01T10:00:00Z"},
    ]
    jsonl = "\n".join(json.dumps(line) for line in lines)
    response = api.post(
        "/api/v1/tools/memory_ingest_history",
        {"jsonl": jsonl, "dry_run": True},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    bad = response.json()["bad_lines"]
    assert [b.split(":")[0] for b in bad] == ["line 1", "line 2", "line 3"], bad
    assert response.json()["turns"] == 1


# --- the same for every tool's arguments (POST /tools/{name}, MCP) ------------------------


def _tool_cases() -> list[Any]:
    from memory.tools import registry

    cases = []
    for entry in registry.manifest("engram"):
        for name, prop in entry["parameters"].get("properties", {}).items():
            text = json.dumps(prop)
            if '"date-time"' in text and prop.get("type") != "array":
                cases += [
                    pytest.param(entry["name"], name, v, id=f"{entry['name']}.{name}={v}")
                    for v in (EARLY, LATE)
                ]
            elif '"integer"' in text and prop.get("type") != "array":
                cases.append(
                    pytest.param(entry["name"], name, HUGE, id=f"{entry['name']}.{name}=2**63")
                )
    return cases


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(("tool", "name", "value"), _tool_cases())
def test_tool_arguments_beyond_what_is_stored_are_refused_by_name(api, tool, name, value):  # type: ignore[no-untyped-def]
    from memory.tools import registry

    entry = next(e for e in registry.manifest("engram") if e["name"] == tool)
    example = dict(registry.get(tool).examples[0]) if registry.get(tool).examples else {}
    example[name] = value
    response = api.post(f"/api/v1/tools/{tool}", example, content_type="application/json")
    assert response.status_code == 422, (tool, response.status_code, response.content[:300])
    assert name in response.json()["detail"], (entry["name"], response.json())


def test_a_fact_entry_dated_beyond_the_limits_is_refused(api):  # type: ignore[no-untyped-def]
    response = api.post(
        "/api/v1/tools/memory_facts",
        {"facts": [{"entity": "Ingrid", "content": "works in Bergen", "valid_from": LATE}]},
        content_type="application/json",
    )
    assert response.status_code == 422 and "valid_from" in response.json()["detail"]
