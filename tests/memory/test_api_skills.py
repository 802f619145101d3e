"""Skills (L4) over REST: list with filters, create (drafts disabled), read,
edit, enable, delete; the memory_skills tool sees enabled skills only and
counts their use; another space's skills are not found."""

from __future__ import annotations

from memory.models import AuditEvent, Skill
from memory.services.spaces import create_api_key


def post(api, path, body):  # type: ignore[no-untyped-def]
    return api.post(path, body, content_type="application/json")


def test_create_read_edit_delete(api, space):
    made = post(
        api,
        "/api/v1/skills",
        {"name": "deploy", "description": "Ship it", "body": "1. test\n2. push", "enabled": True},
    )
    assert made.status_code == 201, made.json()
    skill = made.json()
    assert skill["enabled"] is True and skill["draft"] is False
    assert skill["skill_md"].startswith("---\nname: deploy\ndescription: Ship it\n---")
    assert api.get(f"/api/v1/skills/{skill['id']}").json()["body"] == "1. test\n2. push"
    patched = api.patch(
        f"/api/v1/skills/{skill['id']}", {"enabled": False}, content_type="application/json"
    )
    assert patched.status_code == 200 and patched.json()["enabled"] is False
    assert post(api, "/api/v1/skills", {"name": "deploy"}).status_code == 409
    assert api.delete(f"/api/v1/skills/{skill['id']}").status_code == 204
    assert api.get(f"/api/v1/skills/{skill['id']}").status_code == 404
    assert {e.action for e in AuditEvent.objects.filter(target_type="skill")} == {
        "add",
        "edit",
        "delete",
    }


def test_drafts_are_created_disabled_and_enabling_accepts_them(api):
    draft = post(api, "/api/v1/skills", {"name": "backup", "draft": True, "enabled": True}).json()
    assert draft["enabled"] is False and draft["draft"] is True
    assert [s["name"] for s in api.get("/api/v1/skills?draft=true").json()["skills"]] == ["backup"]
    assert api.get("/api/v1/skills?enabled=true").json()["skills"] == []
    on = api.patch(
        f"/api/v1/skills/{draft['id']}", {"enabled": True}, content_type="application/json"
    ).json()
    assert on["enabled"] is True and on["draft"] is False


def test_search_with_q(api):
    post(api, "/api/v1/skills", {"name": "deploy", "body": "run the migrations"})
    post(api, "/api/v1/skills", {"name": "backup", "body": "copy the database"})
    assert [s["name"] for s in api.get("/api/v1/skills?q=migrations").json()["skills"]] == [
        "deploy"
    ]


def test_memory_skills_lists_enabled_ones_and_counts_use(api, space):
    on = post(
        api, "/api/v1/skills", {"name": "deploy", "body": "migrate then restart", "enabled": True}
    ).json()
    post(api, "/api/v1/skills", {"name": "draft-one", "body": "migrate", "draft": True})
    body = post(api, "/api/v1/tools/memory_skills", {"query": "migrate"}).json()
    assert [s["name"] for s in body["skills"]] == ["deploy"]
    used = post(api, "/api/v1/tools/memory_skills", {"use": on["id"]}).json()
    assert used["used"] == on["id"] and Skill.objects.get(pk=on["id"]).usage_count == 1
    draft = Skill.objects.get(name="draft-one")
    assert post(api, "/api/v1/tools/memory_skills", {"use": str(draft.pk)}).status_code == 404


def test_another_space_sees_none_of_them(api, client_for):
    made = post(api, "/api/v1/skills", {"name": "deploy"}).json()
    _, key = create_api_key(space_name="elsewhere")
    other = client_for(key)
    assert other.get(f"/api/v1/skills/{made['id']}").status_code == 404
    assert other.delete(f"/api/v1/skills/{made['id']}").status_code == 404
    assert other.get("/api/v1/skills").json()["skills"] == []


def test_skill_md_folders_export_and_import(api, space, tmp_path):
    from django.core.management import call_command

    post(
        api,
        "/api/v1/skills",
        {
            "name": "Deploy app",
            "description": "Ship it",
            "body": "1. test\n2. push",
            "enabled": True,
        },
    )
    call_command("skills", "export", str(tmp_path), "--space", space.name)
    text = (tmp_path / "deploy-app" / "SKILL.md").read_text()
    assert text.startswith("---\nname: Deploy app\ndescription: Ship it\n---") and "2. push" in text
    (tmp_path / "backup").mkdir()
    (tmp_path / "backup" / "SKILL.md").write_text(
        "---\nname: backup\ndescription: Copy the db\n---\n\ncp db db.bak\n"
    )
    (tmp_path / "deploy-app" / "SKILL.md").write_text(text.replace("2. push", "2. push\n3. tag"))
    call_command("skills", "import", str(tmp_path), "--space", space.name)
    backup = Skill.objects.get(space=space, name="backup")
    assert (
        backup.enabled is False
        and backup.body == "cp db db.bak"
        and backup.description == "Copy the db"
    )
    assert "3. tag" in Skill.objects.get(space=space, name="Deploy app").body


def test_memory_report_with_a_skill_id_counts_a_use(api, space):
    on = post(api, "/api/v1/skills", {"name": "deploy", "enabled": True}).json()
    body = post(api, "/api/v1/tools/memory_report", {"skill_id": on["id"], "note": "worked"}).json()
    assert body["id"] == on["id"] and body["usage_count"] == 1
    assert AuditEvent.objects.filter(space=space, action="use", target_id=on["id"]).exists()
    draft = post(api, "/api/v1/skills", {"name": "maybe", "draft": True}).json()
    assert post(api, "/api/v1/tools/memory_report", {"skill_id": draft["id"]}).status_code == 404
    both = post(api, "/api/v1/tools/memory_report", {"id": "1", "skill_id": on["id"]})
    assert both.status_code == 422 and "exactly one" in both.json()["detail"]
