"""Every operation of the OpenAPI schema, called anonymously, with a revoked
key and as another space, against a space holding a canary in every kind of
memory (turn, fact, core block, skill, environment report, consolidation run,
import job).

Generated from the schema, so an operation added later is in the matrix
without touching this file. Anonymous and revoked calls answer 401; the other
space's calls that name the first space's ids (path ids, item ids in bodies)
answer 404; no answer ever carries the canary; and the first space's export
is the same after the whole matrix as before it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from engram_site.api import api as ninja_api
from memory.models import IngestJob, MemoryItem, Skill
from memory.services.spaces import create_api_key, revoke_api_key

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore::UserWarning")]

CANARY = "Quillfeather"  # a made-up word no generated probe contains
SCHEMA = ninja_api.get_openapi_schema()
COMPONENTS = SCHEMA["components"]["schemas"]
PUBLIC = {"/api/v1/health"}


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = COMPONENTS[node["$ref"].rsplit("/", 1)[-1]]
    if "anyOf" in node:
        return _resolve(
            next((o for o in node["anyOf"] if o.get("type") != "null"), node["anyOf"][0])
        )
    return node


# Fields that look things up (searched words, ids) carry the canary or the
# first space's ids; everything else gets a harmless value.
LOOKUPS = {"query", "q", "old_text", "text_query"}


def _value(name: str, node: dict[str, Any], ids: dict[str, str]) -> Any:
    node = _resolve(node)
    if name in ids:
        return int(ids[name]) if node.get("type") == "integer" else ids[name]
    if "enum" in node:
        return node["enum"][0]
    kind = node.get("type")
    if kind == "integer":
        return max(int(node.get("minimum", 1)), 1)
    if kind == "number":
        return 0.5
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    if kind == "object":
        return {}
    if node.get("format") == "date-time":
        return "2024-01-01T00:00:00Z"
    return CANARY if name in LOOKUPS else "probe"


def _request(path: str, op: dict[str, Any], ids: dict[str, str]) -> tuple[str, dict[str, Any], Any]:
    query: dict[str, Any] = {}
    for param in op.get("parameters", []):
        value = _value(param["name"], param["schema"], ids)
        if param["in"] == "path":
            path = path.replace("{" + param["name"] + "}", str(value))
        elif param["in"] == "query" and (param.get("required") or param["name"] in LOOKUPS):
            query[param["name"]] = value
    body = None
    content = op.get("requestBody", {}).get("content", {}).get("application/json")
    if content:
        schema = _resolve(content["schema"])
        props = schema.get("properties", {})
        # An id of the first space is the probe when the body takes one
        # (forget takes an id or a query, not both).
        probes = {n for n in props if n in ids} or {n for n in props if n in LOOKUPS}
        body = {
            name: _value(name, prop, ids)
            for name, prop in props.items()
            if name in schema.get("required", []) or name in probes
        }
    return path, query, body


def _operations() -> list[Any]:
    return [
        pytest.param(method.upper(), path, op, id=f"{method.upper()} {path}")
        for path, ops in SCHEMA["paths"].items()
        for method, op in ops.items()
        if path not in PUBLIC
    ]


def _call(client: Client, method: str, path: str, query: dict[str, Any], body: Any) -> Any:
    if body is not None:
        url = path + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")
        return getattr(client, method.lower())(
            url, json.dumps(body), content_type="application/json"
        )
    return getattr(client, method.lower())(path, query)


def _post(client: Client, path: str, body: Any) -> Any:
    response = client.post(path, json.dumps(body), content_type="application/json")
    assert response.status_code < 300, (path, response.content)
    return response.json()


@pytest.fixture
def first_space(client_for) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Space A, with the canary everywhere, and the ids of what holds it."""
    from consolidation.models import ConsolidationRun

    _, key = create_api_key(space_name="first")
    a = client_for(key)
    _post(a, "/api/v1/turns", {"session_id": "c", "role": "user", "text": f"My dog is {CANARY}."})
    fact = _post(a, "/api/v1/memory/facts", {"text": f"The dog's name is {CANARY}"})
    a.put(
        "/api/v1/core/user",
        json.dumps({"text": f"Owns a dog called {CANARY}."}),
        content_type="application/json",
    )
    _post(
        a,
        "/api/v1/skills",
        {"name": "walk", "description": f"walk {CANARY}", "body": f"Walk {CANARY}."},
    )
    _post(
        a,
        "/api/v1/environment/report",
        {"hostname": "lighthouse-laptop", "os": "Linux", "home": f"/home/{CANARY}"},
    )
    document = _post(
        a, "/api/v1/documents", {"title": "Dogs", "text": f"# Dogs\nOur dog is {CANARY}."}
    )
    _post(a, "/api/v1/consolidate", {})
    job = _post(
        a,
        "/api/v1/import/graph",
        {"nodes": [{"name": CANARY, "description": "a dog"}], "background": True},
    )
    run = ConsolidationRun.objects.filter(space__name="first").order_by("pk").last()
    ids = {
        "skill_id": str(Skill.objects.get(space__name="first").pk),
        "run_id": str(run.pk if run else 1),
        "job_id": job["job_id"],
        "item_id": str(fact["id"]),
        "document_id": document["id"],
        "label": "user",
        "name": "memory_search",
        # Not the canary itself: an error may echo the caller's own input.
        # What would leak is the host's report (its home holds the canary).
        "host": "lighthouse-laptop",
    }
    assert MemoryItem.objects.filter(space__name="first", text__contains=CANARY).exists()
    assert IngestJob.objects.filter(space__name="first", kind="import_graph").exists()
    return {"client": a, "key": key, "ids": ids}


def _export(client: Client) -> dict[str, Any]:
    data = client.get("/api/v1/export").json()
    data.pop("exported_at", None)
    return data


@pytest.mark.parametrize(("method", "path", "op"), _operations())
def test_no_other_caller_reaches_the_first_space(first_space, client_for, method, path, op):  # type: ignore[no-untyped-def]
    ids = first_space["ids"]
    before = _export(first_space["client"])
    request = _request(path, op, ids)

    anonymous = _call(Client(), method, *request)
    assert anonymous.status_code == 401, (anonymous.status_code, anonymous.content[:200])

    revoked_key, revoked_plain = create_api_key(space_name="first", name="old")
    revoke_api_key(key=revoked_key)
    revoked = _call(client_for(revoked_plain), method, *request)
    assert revoked.status_code == 401, (revoked.status_code, revoked.content[:200])

    _, other_plain = create_api_key(space_name="second")
    # A key linked to a user space reads two spaces; the first is neither.
    _, linked_plain = create_api_key(space_name="second-project", user_space_name="second-user")
    names_an_id = any(
        p["in"] == "path" and p["name"] in ids and p["name"] not in ("label", "name")
        for p in op.get("parameters", [])
    )
    body = request[2] or {}
    others = [_call(client_for(plain), method, *request) for plain in (other_plain, linked_plain)]
    for other in others:
        assert other.status_code < 500, other.content[:300]
        text = other.content.decode("utf-8", "replace").lower()
        assert CANARY.lower() not in text, other.content[:400]
        if names_an_id or "item_id" in body:
            assert other.status_code in (403, 404), (other.status_code, other.content[:200])
    for response in (anonymous, revoked, *others):
        assert response["Content-Type"].startswith("application/json")
    assert _export(first_space["client"]) == before


LINKED_WORD = "Brambleknot"  # in the linked pair's two spaces, and in the first


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/api/v1/recall"),
        ("POST", "/api/v1/memory/search"),
        ("POST", "/api/v1/tools/memory_search"),
        ("POST", "/api/v1/memory/recall_facts"),
        ("GET", "/api/v1/context"),
    ],
)
@pytest.mark.django_db(transaction=True)  # /context recalls on a helper connection
def test_a_linked_pair_sees_both_and_never_a_third(client_for, method, path):  # type: ignore[no-untyped-def]
    _, first_plain = create_api_key(space_name="first")
    _, user_plain = create_api_key(space_name="pair-user")
    _, project_plain = create_api_key(space_name="pair-project", user_space_name="pair-user")
    for plain, text in (
        (first_plain, f"The {LINKED_WORD} in the first space is {CANARY}"),
        (user_plain, f"The {LINKED_WORD} of the user is copper"),
        (project_plain, f"The {LINKED_WORD} of the project is brass"),
    ):
        _post(client_for(plain), "/api/v1/memory/facts", {"text": text})
    query = f"{LINKED_WORD} {CANARY}"
    project = client_for(project_plain)
    if method == "GET":
        answer = project.get(path, {"query": query})
    else:
        answer = _call(project, method, path, {}, {"query": query, "k": 20})
    assert answer.status_code == 200, answer.content[:300]
    text = answer.content.decode()
    assert "copper" in text and "brass" in text, text[:600]
    assert CANARY not in text.replace(query, ""), text[:600]
    if method == "POST" and path != "/api/v1/memory/recall_facts":
        assert {r["space"] for r in answer.json()["results"]} == {"pair-user", "pair-project"}
    # An id from the first space is still not found through the linked key.
    first_item = str(MemoryItem.objects.get(space__name="first").pk)
    missing = _call(
        project,
        "POST",
        "/api/v1/tools/memory_update",
        {},
        {"id": first_item, "text": "probe", "dry_run": True},
    )
    assert missing.status_code == 404, missing.content[:200]


# Every by-id write or read a linked key can make, as (path, body for an id).
BY_ID = [
    ("/api/v1/tools/memory_update", lambda i: {"id": i, "text": "probe"}),
    ("/api/v1/tools/memory_report", lambda i: {"id": i, "outcome": "failure"}),
    ("/api/v1/tools/memory_report", lambda i: {"id": i, "grade": 0}),
    ("/api/v1/tools/memory_forget", lambda i: {"item_id": i}),
    ("/api/v1/tools/memory_forget", lambda i: {"item_id": i, "dry_run": True}),
    ("/api/v1/tools/memory_review", lambda i: {"id": i}),
    ("/api/v1/memory/forget", lambda i: {"item_id": i}),
    ("/api/v1/memory/forget", lambda i: {"item_id": i, "hard": True}),
]


@pytest.mark.parametrize(("path", "body"), BY_ID, ids=[f"{p} {sorted(b('1'))}" for p, b in BY_ID])
def test_a_linked_key_on_a_third_spaces_id_is_a_missing_id(client_for, path, body):  # type: ignore[no-untyped-def]
    """A third space's id through a linked key answers exactly what an id
    that exists nowhere answers, and the third space is untouched."""
    _, first_plain = create_api_key(space_name="first")
    _, user_plain = create_api_key(space_name="pair-user")
    _, project_plain = create_api_key(space_name="pair-project", user_space_name="pair-user")
    _post(client_for(user_plain), "/api/v1/memory/facts", {"text": "The user's bike is red"})
    third = _post(client_for(first_plain), "/api/v1/memory/facts", {"text": f"Dog {CANARY}"})
    before = _export(client_for(first_plain))
    project = client_for(project_plain)
    missing_id = str(MemoryItem.objects.order_by("-pk").first().pk + 1000)  # type: ignore[union-attr]
    for_third = _call(project, "POST", path, {}, body(third["id"]))
    for_missing = _call(project, "POST", path, {}, body(missing_id))
    assert for_third.status_code == for_missing.status_code == 404, for_third.content[:200]
    assert for_third.json() == json.loads(
        for_missing.content.decode().replace(missing_id, str(third["id"]))
    )
    assert CANARY not in for_third.content.decode()
    assert _export(client_for(first_plain)) == before
