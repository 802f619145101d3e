"""The probe document, drift between snapshots and the prompt block."""

from __future__ import annotations

import dataclasses

import pytest

from environment import services
from environment.models import EnvironmentSnapshot
from environment.probe import Partition, build_environment, probe
from tests.environment import hosts


def test_it_describes_a_windows_host_with_wsl_distros() -> None:
    env = build_environment(hosts.windows_host())
    assert env["os"] == "Windows" and env["path_style"] == "windows" and env["sep"] == "\\"
    assert [d["letter"] for d in env["drives"]] == ["C", "D"]
    assert env["drives"][1]["free_gb"] == 512.0
    assert env["folders"]["Documents"] == "C:\\Users\\ana\\OneDrive\\Documents"
    assert env["folders"]["Desktop"] == "C:\\Users\\ana\\Desktop"
    assert "Pictures" not in env["folders"]  # only folders that exist
    assert env["shell"] == "PowerShell"
    assert env["wsl_distros"] == ["Ubuntu", "Debian"]
    assert env["path_dirs"] == ["C:\\Windows\\system32", "C:\\Python312\\"]


def test_it_detects_wsl_and_the_windows_drive_mount() -> None:
    env = build_environment(hosts.wsl_host())
    assert env["is_wsl"] and env["wsl_distro"] == "Ubuntu"
    assert {d["mount"]: d.get("letter") for d in env["drives"]} == {"/": None, "/mnt/c": "C"}
    block = services.render_environment(env)
    assert "WSL: Ubuntu" in block and "/mnt/c" in block and "C:\\ = /mnt/c" in block


def test_it_reads_xdg_folders_on_linux() -> None:
    host = dataclasses.replace(
        hosts.linux_host(extra_dirs=("/home/ana/Schreibtisch",)),
        read_text=lambda p: (
            'XDG_DESKTOP_DIR="$HOME/Schreibtisch"\n'
            if p == "/home/ana/.config/user-dirs.dirs"
            else None
        ),
    )
    env = build_environment(host)
    assert env["folders"]["Desktop"] == "/home/ana/Schreibtisch"
    assert env["os_version"] == "Ubuntu 24.04.1 LTS (kernel 6.8.0-45-generic)"
    assert env["shell"] == "zsh"


def test_it_probes_the_real_server_host() -> None:
    env = probe()
    assert env["local"] is True and env["home"] and env["python"]
    assert env["drives"], "at least the root file system"


def _tokens(text: str) -> int:
    # A conservative estimate for Latin text: about four characters a token.
    return len(text) // 4 + 1


@pytest.mark.parametrize(
    "make", [hosts.linux_host, hosts.wsl_host, hosts.windows_host, hosts.mac_host]
)
def test_the_block_names_os_home_paths_drives_shell_python(make) -> None:  # type: ignore[no-untyped-def]
    host = make()
    block = services.render_environment(build_environment(host))
    assert block.startswith("## ENVIRONMENT")
    for needle in (host.home, "Shell:", f"Python: {host.python}", "GB free", "Paths:"):
        assert needle in block
    assert _tokens(block) < 300


def test_the_block_stays_small_on_a_crowded_host() -> None:
    many = [
        Partition(mount=f"/media/disk{i:02d}", fstype="ext4", total_bytes=10**12, free_bytes=10**11)
        for i in range(40)
    ]
    host = dataclasses.replace(hosts.linux_host(), partitions=many)
    block = services.render_environment(build_environment(host))
    assert "+34 more" in block
    assert _tokens(block) < 300


@pytest.mark.django_db
def test_refresh_records_drift_against_the_previous_probe() -> None:
    first = services.refresh_probe(facts=hosts.linux_host())
    assert first.drift == {}
    same = services.refresh_probe(facts=hosts.linux_host())
    assert same.drift == {}

    changed = dataclasses.replace(
        hosts.linux_host(extra_dirs=("/home/ana/Music",), python="3.12.1"),
        partitions=[
            *hosts.linux_host().partitions,
            Partition(mount="/media/usb", fstype="vfat", total_bytes=2**35, free_bytes=2**34),
        ],
    )
    snap = services.refresh_probe(facts=changed)
    assert snap.drift["drives_added"] == ["/media/usb"]
    assert snap.drift["folders_added"] == {"Music": "/home/ana/Music"}
    assert snap.drift["changed"] == {"python": {"from": "3.11.9", "to": "3.12.1"}}

    back = services.refresh_probe(facts=hosts.linux_host())
    assert back.drift["drives_removed"] == ["/media/usb"]
    assert back.drift["folders_removed"] == ["Music"]
    assert EnvironmentSnapshot.objects.filter(space=None, source="probe").count() == 4


@pytest.mark.django_db
def test_render_block_prefers_the_space_agent_host(space) -> None:  # type: ignore[no-untyped-def]
    services.refresh_probe(facts=hosts.linux_host())
    assert services.render_block(space=space) == ""  # may not see the server
    space.host_access = True
    assert "/home/ana" in services.render_block(space=space)
    services.report_environment(
        space=space, data=build_environment(hosts.windows_host(), local=False)
    )
    block = services.render_block(space=space)
    assert "C:\\Users\\ana" in block and "backslash" in block


@pytest.mark.django_db
def test_the_beat_task_refreshes_the_probe() -> None:
    from django.conf import settings

    from environment.tasks import refresh_environment

    entry = settings.CELERY_BEAT_SCHEDULE["refresh-environment"]
    assert entry["task"] == refresh_environment.name
    assert entry["options"]["expires"] == settings.ENGRAM["ENV_REFRESH_MINUTES"] * 60.0
    refresh_environment.delay()
    assert EnvironmentSnapshot.objects.filter(space=None, source="probe").count() == 1
