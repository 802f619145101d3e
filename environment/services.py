"""L5 services: probe the server host, accept agent-reported hosts, record
drift between snapshots and render the compact ENVIRONMENT prompt block."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from engram_site.db import batch
from environment import selectors
from environment.models import EnvironmentSnapshot
from environment.probe import HostFacts, probe
from memory.errors import Forbidden, Invalid, NotFound
from memory.models import Space
from memory.screening import redact_json, screen

# Snapshots kept per (space, source, host); older ones only repeat what the
# drift field already recorded.
KEEP_SNAPSHOTS = 50
# The block sits in every prompt: a handful of drives and folders is what a
# model needs to stop guessing paths, the rest is noise.
_MAX_DRIVES = 6
_MAX_FOLDERS = 7
_VERSION_KEYS = ("os", "os_version", "python", "shell", "home", "user", "is_wsl", "hostname")


def compute_drift(*, previous: dict[str, Any] | None, current: dict[str, Any]) -> dict[str, Any]:
    """What changed between two environment documents: drives and folders
    that appeared, vanished or moved, and changed versions. Free space is not
    drift (it changes every minute)."""
    if not previous:
        return {}
    drift: dict[str, Any] = {}
    before = {d["mount"] for d in previous.get("drives", [])}
    after = {d["mount"] for d in current.get("drives", [])}
    if after - before:
        drift["drives_added"] = sorted(after - before)
    if before - after:
        drift["drives_removed"] = sorted(before - after)
    old_f: dict[str, str] = previous.get("folders", {})
    new_f: dict[str, str] = current.get("folders", {})
    added = {k: v for k, v in new_f.items() if k not in old_f}
    removed = sorted(k for k in old_f if k not in new_f)
    moved = {
        k: {"from": old_f[k], "to": v} for k, v in new_f.items() if k in old_f and old_f[k] != v
    }
    if added:
        drift["folders_added"] = added
    if removed:
        drift["folders_removed"] = removed
    if moved:
        drift["folders_moved"] = moved
    changed = {
        k: {"from": previous.get(k), "to": current.get(k)}
        for k in _VERSION_KEYS
        if previous.get(k) != current.get(k)
    }
    if changed:
        drift["changed"] = changed
    old_wsl, new_wsl = set(previous.get("wsl_distros", [])), set(current.get("wsl_distros", []))
    if new_wsl - old_wsl:
        drift["wsl_distros_added"] = sorted(new_wsl - old_wsl)
    if old_wsl - new_wsl:
        drift["wsl_distros_removed"] = sorted(old_wsl - new_wsl)
    return drift


def _store(*, space: Space | None, source: str, data: dict[str, Any]) -> EnvironmentSnapshot:
    hostname = str(data.get("hostname", ""))[:255]
    with transaction.atomic():
        prev_qs = EnvironmentSnapshot.objects.filter(space=space, source=source, hostname=hostname)
        previous = prev_qs.order_by("-created_at", "-id").first()
        drift = compute_drift(previous=previous.data if previous else None, current=data)
        snap = EnvironmentSnapshot.objects.create(
            space=space, source=source, hostname=hostname, data=data, drift=drift
        )
        stale = list(
            prev_qs.order_by("-created_at", "-id").values_list("id", flat=True)[KEEP_SNAPSHOTS:]
        )
        if stale:
            EnvironmentSnapshot.objects.filter(id__in=stale).delete()
    return snap


def refresh_probe(*, facts: HostFacts | None = None) -> EnvironmentSnapshot:
    """Probe the server host now and store a snapshot with its drift against
    the previous probe. `facts` replaces the real OS observation (tests)."""
    data = probe(facts)  # file-system and psutil work before the transaction
    return _store(space=None, source="probe", data=data)


def _check_strings(value: Any, *, field: str) -> None:
    # An agent-reported host is rendered into every prompt of the space, so
    # it is an injection surface like any other write.
    if isinstance(value, str):
        result = screen(value)
        if result.flagged:
            raise Invalid(f"{field}: refused by screening ({', '.join(result.reasons)})")
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_strings(k, field=field)
            _check_strings(v, field=f"{field}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_strings(v, field=f"{field}[{i}]")


def report_environment(*, space: Space, data: dict[str, Any]) -> EnvironmentSnapshot:
    """Store the host an agent of `space` runs on (source "agent"). `data`
    has the shape of the probe's document; missing conventions are derived."""
    for key, value in data.items():
        _check_strings(value, field=key)
    # Reports carry environment variables and paths: a token in one must not
    # reach the database or every prompt of the space.
    doc = redact_json(dict(data))
    windows = doc.get("os") == "Windows"
    doc.setdefault("path_style", "windows" if windows else "posix")
    doc["sep"] = "\\" if doc["path_style"] == "windows" else "/"
    doc["local"] = False
    for key, empty in (
        ("drives", []),
        ("folders", {}),
        ("path_dirs", []),
        ("binaries", {}),
        ("wsl_distros", []),
        ("env_dirs", {}),
    ):
        doc.setdefault(key, empty)
    for drive in doc["drives"]:
        mount = str(drive.get("mount", ""))
        if not drive.get("letter") and windows and len(mount) >= 2 and mount[1] == ":":
            drive["letter"] = mount[0].upper()
    return _store(space=space, source="agent", data=doc)


HOST_ACCESS_DENIED = (
    "host_access: this space may not see the server host (its user, home, PATH and disks) "
    "nor check paths or programs on it. Report the agent's own machine with POST "
    "/environment/report, or ask the operator to allow it "
    "(manage.py host_access --space NAME --allow, or the space in the admin)."
)


def require_host_access(space: Space) -> None:
    """The server host is one machine shared by every tenant: only spaces the
    operator allowed (Space.host_access) may see it or probe its file system."""
    if not space.host_access:
        raise Forbidden(HOST_ACCESS_DENIED)


def current_snapshot(*, space: Space, host: str | None = None) -> EnvironmentSnapshot:
    """The host a space's prompts describe: `host=None` is the agent-reported
    host if there is one, else the server; "server" forces the server probe;
    any other value names an agent-reported hostname. The server is only for
    spaces with host access (Forbidden otherwise)."""
    if host is None or host == "server":
        snap = selectors.latest_agent(space=space) if host is None else None
        if snap is None:
            require_host_access(space)
            snap = selectors.latest_probe() or refresh_probe()
        return snap
    snap = selectors.latest_agent(space=space, hostname=host)
    if snap is None:
        raise NotFound(f"host: no environment reported for host {host!r} in this space")
    return snap


def _drive_label(drive: dict[str, Any], *, windows: bool) -> str:
    mount = drive.get("mount", "")
    if windows and drive.get("letter"):
        mount = f"{drive['letter']}:\\"
    elif drive.get("letter"):
        mount = f"{mount} (={drive['letter']}:)"
    free = drive.get("free_gb")
    return f"{mount} {free:g} GB free" if isinstance(free, int | float) else str(mount)


def render_environment(env: dict[str, Any]) -> str:
    """The compact ENVIRONMENT block for one environment document."""
    windows = env.get("path_style") == "windows"
    head = f"OS: {env.get('os', 'unknown')} {env.get('os_version', '')}".rstrip()
    if env.get("is_wsl"):
        head += f" (WSL{': ' + env['wsl_distro'] if env.get('wsl_distro') else ''})"
    who = f" · host: {env.get('hostname', '')}" if env.get("hostname") else ""
    user = f" · user: {env['user']}" if env.get("user") else ""
    lines = ["## ENVIRONMENT", f"{head}{who}{user} · home: {env.get('home', '?')}"]
    if windows:
        lines.append(
            r"Paths: backslash, drive letters (C:\...). Do not invent POSIX paths like /home or /tmp."
        )
    else:
        style = "Paths: forward slash, rooted at /."
        if env.get("is_wsl"):
            style += r" Windows drives are under /mnt/<letter> (C:\ = /mnt/c)."
        elif env.get("os") == "macOS":
            style += " No drive letters; volumes under /Volumes."
        lines.append(style)
    drives = env.get("drives", [])[:_MAX_DRIVES]
    if drives:
        more = len(env.get("drives", [])) - len(drives)
        text = " · ".join(_drive_label(d, windows=windows) for d in drives)
        lines.append(f"Drives: {text}{f' · +{more} more' if more > 0 else ''}")
    folders = list((env.get("folders") or {}).items())[:_MAX_FOLDERS]
    if folders:
        lines.append("Key folders: " + " · ".join(f"{k}={v}" for k, v in folders))
    if env.get("wsl_distros"):
        lines.append(
            "WSL distros: " + ", ".join(env["wsl_distros"][:5]) + r" (\\wsl$\<distro>\...)"
        )
    tail = [
        f"Shell: {env['shell']}" if env.get("shell") else "",
        f"Python: {env['python']}" if env.get("python") else "",
    ]
    if env.get("temp"):
        tail.append(f"Temp: {env['temp']}")
    tail_text = " · ".join(t for t in tail if t)
    if tail_text:
        lines.append(tail_text)
    return "\n".join(lines)


def render_block(*, space: Space) -> str:
    """The ENVIRONMENT block for `space`'s prompt: its agent-reported host if
    one exists, else the server probe; empty for a space that may not see the
    server and reported no host."""
    return batch.one(block_read(space=space))


def block_read(*, space: Space) -> batch.Read[str]:
    """`render_block` as a read to send with others (engram_site/db/batch.py):
    the agent's newest host, and only when there is none the server's."""

    def render(agent: EnvironmentSnapshot | None) -> str:
        if agent is not None:
            return render_environment(agent.data)
        if not space.host_access:
            return ""
        return render_environment(current_snapshot(space=space, host="server").data)

    return selectors.latest_agent_read(space=space).then(render)
