"""Tenancy of the host: the server's environment and its file system are
visible only to spaces with host access (Space.host_access), through every
door of the API; the operator sets it with a command or in the admin."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from environment.probe import build_environment
from memory.models import AuditEvent, Space
from memory.services.spaces import create_api_key
from tests.environment import hosts

pytestmark = pytest.mark.django_db

SERVER_ONLY = [
    ("get", "/api/v1/environment", None),
    ("get", "/api/v1/environment?host=server", None),
    ("post", "/api/v1/environment/refresh", {}),
    ("post", "/api/v1/environment/resolve-path", {"path": "/etc/shadow", "host": "server"}),
    ("post", "/api/v1/environment/resolve-path", {"path": "/etc/passwd"}),
    ("post", "/api/v1/environment/find-binary", {"name": "sh", "host": "server"}),
]


def call(client, method, path, body):  # type: ignore[no-untyped-def]
    if method == "get":
        return client.get(path)
    return client.post(path, body, content_type="application/json")


@pytest.fixture
def two(client_for):  # type: ignore[no-untyped-def]
    """The operator's default space and a tenant's new one."""
    _, own = create_api_key(space_name="default")
    _, tenant = create_api_key(space_name="tenant")
    return client_for(own), client_for(tenant)


def test_new_spaces_may_not_see_the_host_and_the_default_space_may(two) -> None:  # type: ignore[no-untyped-def]
    assert Space.objects.get(name="default").host_access is True
    assert Space.objects.get(name="tenant").host_access is False
    own, _ = two
    server = own.get("/api/v1/environment", {"host": "server"})
    assert server.status_code == 200 and server.json()["data"]["local"] is True


@pytest.mark.parametrize(("method", "path", "body"), SERVER_ONLY)
def test_a_space_without_host_access_gets_403_naming_the_setting(two, method, path, body) -> None:  # type: ignore[no-untyped-def]
    _, tenant = two
    r = call(tenant, method, path, body)
    assert r.status_code == 403, r.content
    assert r["Content-Type"].startswith("application/json")
    assert "host_access" in r.json()["detail"]


def test_resolve_path_is_no_existence_oracle(two) -> None:  # type: ignore[no-untyped-def]
    own, tenant = two
    real, missing = "/etc/passwd", "/no/such/dir/at/all"
    answers = [
        call(tenant, "post", "/api/v1/environment/resolve-path", {"path": p, "host": "server"})
        for p in (real, missing)
    ]
    # Same status and body whether the path exists or not.
    assert answers[0].status_code == answers[1].status_code == 403
    assert answers[0].content == answers[1].content
    body = answers[0].content.decode()
    assert real not in body and "exists" not in answers[0].json()
    # The space with host access does get the check.
    r = call(own, "post", "/api/v1/environment/resolve-path", {"path": real, "host": "server"})
    assert r.status_code == 200 and r.json()["exists"] is True


def test_context_leaves_the_server_out_for_a_space_without_access(two) -> None:  # type: ignore[no-untyped-def]
    import getpass
    import os

    own, tenant = two
    assert own.get("/api/v1/context").json()["blocks"]["environment"].startswith("## ENVIRONMENT")
    ctx = tenant.get("/api/v1/context").json()
    assert ctx["blocks"]["environment"] == ""
    assert os.path.expanduser("~") not in ctx["text"]
    assert f"user: {getpass.getuser()}" not in ctx["text"]


def test_a_space_sees_its_own_reported_host_but_still_not_the_server(two) -> None:  # type: ignore[no-untyped-def]
    _, tenant = two
    doc = build_environment(hosts.windows_host(), local=False)
    body = {k: doc[k] for k in ("hostname", "os", "home", "drives", "folders")}
    assert call(tenant, "post", "/api/v1/environment/report", body).status_code == 200
    mine = tenant.get("/api/v1/environment")
    assert mine.status_code == 200 and mine.json()["source"] == "agent"
    r = call(tenant, "post", "/api/v1/environment/resolve-path", {"path": "~/notes.txt"})
    assert r.status_code == 200
    assert r.json()["exists"] is None  # a reported host's file system is never checked here
    assert "C:\\Users" in r.json()["path"]
    assert (
        tenant.get("/api/v1/context").json()["blocks"]["environment"].startswith("## ENVIRONMENT")
    )
    for method, path, payload in SERVER_ONLY:
        if "server" in path or (payload or {}).get("host") == "server" or "refresh" in path:
            assert call(tenant, method, path, payload).status_code == 403, path


def test_the_operator_grants_and_revokes_it_with_a_command(two, capsys) -> None:  # type: ignore[no-untyped-def]
    _, tenant = two
    call_command("host_access", "--space", "tenant")
    assert "tenant: host access denied" in capsys.readouterr().out
    call_command("host_access", "--space", "tenant", "--allow")
    assert tenant.get("/api/v1/environment", {"host": "server"}).status_code == 200
    call_command("host_access", "--space", "tenant", "--deny")
    assert tenant.get("/api/v1/environment", {"host": "server"}).status_code == 403
    changes = AuditEvent.objects.filter(space__name="tenant", action="host_access")
    assert [e.detail["allowed"] for e in changes.order_by("id")] == [True, False]
    from django.core.management.base import CommandError

    with pytest.raises(CommandError):
        call_command("host_access", "--space", "nobody", "--allow")


def test_the_operator_sets_it_in_the_admin_and_the_edit_is_audited(two, client) -> None:  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import User

    _, tenant = two
    staff = User.objects.create_superuser("op", "op@example.com", "pw")
    client.force_login(staff)
    space = Space.objects.get(name="tenant")
    r = client.post(
        "/admin/memory/space/",
        {"action": "allow_host_access", "_selected_action": [space.pk]},
    )
    assert r.status_code == 302
    assert tenant.get("/api/v1/environment", {"host": "server"}).status_code == 200
    event = AuditEvent.objects.filter(space=space, action="host_access").get()
    assert event.actor == "admin:op" and event.detail == {"allowed": True}

    # The change form too: an edit names its fields, not their values.
    created = space.created_at
    r = client.post(
        f"/admin/memory/space/{space.pk}/change/",
        {
            "name": "tenant",
            "kind": "user",
            "description": "a tenant",
            "created_at_0": created.strftime("%Y-%m-%d"),
            "created_at_1": created.strftime("%H:%M:%S"),
        },
    )
    assert r.status_code == 302, r.content.decode()[:2000]
    assert tenant.get("/api/v1/environment", {"host": "server"}).status_code == 403
    edit = AuditEvent.objects.filter(space=space, action="admin_edit").get()
    assert edit.detail["model"] == "memory.Space"
    # (created_at too: the form's widget drops its microseconds.)
    assert {"description", "host_access"} <= set(edit.detail["fields"])
    assert "a tenant" not in str(edit.detail)
