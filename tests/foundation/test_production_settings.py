"""The documented production environment: `check --deploy` clean, HTTPS
enforced behind a proxy (redirect, HSTS, secure cookies) with health checks
still answering over plain HTTP, and a Content-Security-Policy on HTML."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.test import Client

# What the README's "Production" section and docker-compose.yml set.
PRODUCTION_ENV = {
    "ENGRAM_PRODUCTION": "true",
    "ENGRAM_ALLOWED_HOSTS": "memory.example.com",
    "ENGRAM_CSRF_TRUSTED_ORIGINS": "https://memory.example.com",
    "ENGRAM_DEBUG": "false",
}


def check_deploy(tmp_path: Path, extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_DATA_DIR=str(tmp_path), **extra)
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_check_deploy_is_clean_in_the_production_environment(tmp_path):
    done = check_deploy(
        tmp_path, {**PRODUCTION_ENV, "ENGRAM_SECRET_KEY": secrets.token_urlsafe(50)}
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def _compose_web_env() -> dict[str, str]:
    """The web service's environment in docker-compose.yml, with ${VAR:-default}
    taken at its default and the required secret key made up."""
    compose = yaml.safe_load(Path(settings.BASE_DIR, "docker-compose.yml").read_text())
    env = {}
    for name, value in compose["services"]["web"]["environment"].items():
        text = str(value)
        match = re.fullmatch(r"\$\{(\w+)(:-|:\?)(.*)\}", text)
        if match and match.group(2) == ":-":
            text = match.group(3)
        elif match:
            text = secrets.token_urlsafe(50)
        env[name] = text
    return env


def test_check_deploy_is_clean_with_the_compose_files_environment(tmp_path):
    env = _compose_web_env()
    assert env["ENGRAM_PRODUCTION"] == "true"
    env.pop("ENGRAM_DATA_DIR")  # /data in the container
    done = check_deploy(tmp_path, env)
    assert done.returncode == 0, done.stdout + done.stderr


def test_check_deploy_warns_without_it(tmp_path):
    done = check_deploy(tmp_path, {})
    assert done.returncode != 0
    for warning in ("W004", "W008", "W012", "W016"):
        assert warning in done.stderr + done.stdout


@pytest.fixture
def production(settings):  # type: ignore[no-untyped-def]
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 31_536_000
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    settings.SECURE_HSTS_PRELOAD = True
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True


@pytest.mark.django_db
def test_plain_http_is_redirected_and_https_gets_hsts(production, api_key):
    plain = Client(HTTP_AUTHORIZATION=f"Bearer {api_key}")
    response = plain.get("/api/v1/status")
    assert response.status_code == 301
    assert response["Location"] == "https://testserver/api/v1/status"
    proxied = Client(HTTP_AUTHORIZATION=f"Bearer {api_key}", HTTP_X_FORWARDED_PROTO="https")
    response = proxied.get("/api/v1/status")
    assert response.status_code == 200
    assert response["Strict-Transport-Security"] == ("max-age=31536000; includeSubDomains; preload")
    # The container's health check speaks plain HTTP from inside.
    assert plain.get("/api/v1/health").status_code == 200


@pytest.mark.django_db
def test_cookies_are_secure_in_production(production, django_user_model):
    django_user_model.objects.create_superuser("admin", "", "a-long-password")
    client = Client(HTTP_X_FORWARDED_PROTO="https")
    client.post("/admin/login/", {"username": "admin", "password": "a-long-password"})
    assert client.cookies["sessionid"]["secure"] is True
    assert client.cookies["csrftoken"]["secure"] is True


@pytest.mark.django_db
def test_html_pages_carry_the_policy_and_json_does_not(admin_client, api):
    page = admin_client.get("/", follow=True)
    assert page.status_code == 200 and page["Content-Type"].startswith("text/html")
    policy = page["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    assert "Content-Security-Policy" not in api.get("/api/v1/status")


def test_templates_carry_no_inline_handlers_the_policy_would_block():
    for template in Path(settings.BASE_DIR, "templates").rglob("*.html"):
        text = template.read_text()
        for handler in ("onchange=", "onsubmit=", "onclick=", "onload=", "javascript:"):
            assert handler not in text, f"{template}: {handler}"
        assert "<script>" not in text, f"{template}: inline script"
