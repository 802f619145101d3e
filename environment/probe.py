"""The L5 host probe: what machine Engram serves, as one JSON-able dict.

Gathering raw facts from the OS (`gather_host_facts`) is kept apart from turning
them into the environment document (`build_environment`), so tests fake Linux,
macOS or Windows+WSL by handing in a `HostFacts` and nothing else is patched.
"""

from __future__ import annotations

import getpass
import os
import platform
import posixpath
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

# Pseudo and container filesystems say nothing about where a user keeps files.
_IGNORED_FSTYPES = {
    "squashfs",
    "tmpfs",
    "devtmpfs",
    "overlay",
    "proc",
    "sysfs",
    "cgroup",
    "cgroup2",
    "autofs",
    "nsfs",
    "fuse.snapfuse",
}
_IGNORED_MOUNT_PREFIXES = ("/snap/", "/var/lib/docker", "/boot/efi", "/run/", "/dev/", "/sys/")
_GB = 1024**3

# Folder names a user says ("put it on my Desktop") mapped to where they live.
KNOWN_FOLDERS = ("Desktop", "Documents", "Downloads", "Pictures", "Music", "Videos")
# Common roots where people keep their code; only the ones that exist are kept.
PROJECT_FOLDERS = ("projects", "Projects", "code", "src", "dev", "repos", "workspace")


@dataclass(frozen=True)
class Partition:
    mount: str
    device: str = ""
    fstype: str = ""
    total_bytes: int = 0
    free_bytes: int = 0


@dataclass
class HostFacts:
    """Raw observations of one host. `exists` and `read_text` are the probe's
    only access to the file system, so a faked host brings its own."""

    system: str  # platform.system(): Linux | Darwin | Windows
    release: str
    version: str
    machine: str
    hostname: str
    user: str
    home: str
    environ: Mapping[str, str]
    python: str
    cpu_count: int | None = None
    ram_total_bytes: int | None = None
    partitions: list[Partition] = field(default_factory=list)
    wsl_distros: list[str] = field(default_factory=list)
    exists: Callable[[str], bool] = os.path.isdir
    read_text: Callable[[str], str | None] = lambda _path: None
    temp: str = ""
    distro: str = ""  # Linux: PRETTY_NAME from os-release, e.g. "Ubuntu 22.04.4 LTS"


def _distro() -> str:
    try:
        return platform.freedesktop_os_release().get("PRETTY_NAME", "")
    except OSError:
        return ""


def _read_text(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _partitions() -> list[Partition]:
    found: list[Partition] = []
    seen_devices: set[str] = set()
    for part in psutil.disk_partitions(all=False):
        if part.fstype in _IGNORED_FSTYPES or part.mountpoint.startswith(_IGNORED_MOUNT_PREFIXES):
            continue
        # Bind mounts show one device several times; the first mount wins.
        if part.device and part.device in seen_devices and os.name != "nt":
            continue
        try:
            usage = psutil.disk_usage(part.mountpoint)
        except (OSError, PermissionError):
            continue  # e.g. an empty card reader on Windows
        seen_devices.add(part.device)
        found.append(
            Partition(
                mount=part.mountpoint,
                device=part.device,
                fstype=part.fstype,
                total_bytes=usage.total,
                free_bytes=usage.free,
            )
        )
    return found


def _wsl_distros() -> list[str]:
    # Only meaningful on Windows; wsl.exe prints UTF-16 names, one per line.
    wsl = shutil.which("wsl.exe") or shutil.which("wsl")
    if not wsl:
        return []
    try:
        out = subprocess.run(  # fixed argv, no shell
            [wsl, "--list", "--quiet"], capture_output=True, timeout=5, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    text = out.decode("utf-16-le", errors="ignore") if b"\x00" in out else out.decode()
    return [line.strip() for line in text.splitlines() if line.strip()]


def gather_host_facts() -> HostFacts:
    """Observe the machine this process runs on."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = os.environ.get("USER") or os.environ.get("USERNAME") or ""
    system = platform.system()
    return HostFacts(
        system=system,
        release=platform.release(),
        # On macOS platform.release() is the Darwin kernel; mac_ver() is the product version.
        version=platform.mac_ver()[0] if system == "Darwin" else platform.version(),
        machine=platform.machine(),
        hostname=socket.gethostname(),
        user=user,
        home=str(Path.home()),
        environ=dict(os.environ),
        python=platform.python_version(),
        cpu_count=psutil.cpu_count(logical=True),
        ram_total_bytes=psutil.virtual_memory().total,
        partitions=_partitions(),
        wsl_distros=_wsl_distros() if system == "Windows" else [],
        exists=os.path.isdir,
        read_text=_read_text,
        temp=tempfile.gettempdir(),
        distro=_distro() if system == "Linux" else "",
    )


def _gb(n: int) -> float:
    return round(n / _GB, 1)


def _is_wsl(facts: HostFacts) -> bool:
    return facts.system == "Linux" and (
        "microsoft" in facts.release.lower() or "WSL_DISTRO_NAME" in facts.environ
    )


def _xdg_dirs(facts: HostFacts) -> dict[str, str]:
    """XDG user dirs (localised names like ~/Schreibtisch) when configured."""
    config_home = facts.environ.get("XDG_CONFIG_HOME") or posixpath.join(facts.home, ".config")
    text = facts.read_text(posixpath.join(config_home, "user-dirs.dirs"))
    if not text:
        return {}
    keys = {
        "XDG_DESKTOP_DIR": "Desktop",
        "XDG_DOCUMENTS_DIR": "Documents",
        "XDG_DOWNLOAD_DIR": "Downloads",
        "XDG_PICTURES_DIR": "Pictures",
        "XDG_MUSIC_DIR": "Music",
        "XDG_VIDEOS_DIR": "Videos",
    }
    found: dict[str, str] = {}
    for line in text.splitlines():
        name, _, value = line.partition("=")
        label = keys.get(name.strip())
        if label and value:
            found[label] = value.strip().strip('"').replace("$HOME", facts.home)
    return found


def _folders(facts: HostFacts, *, windows: bool) -> dict[str, str]:
    join = (lambda *p: "\\".join(s.rstrip("\\") for s in p)) if windows else posixpath.join
    candidates: dict[str, list[str]] = {}
    xdg = {} if windows else _xdg_dirs(facts)
    onedrive = facts.environ.get("OneDrive", "") if windows else ""
    for name in KNOWN_FOLDERS:
        options = []
        if name in xdg:
            options.append(xdg[name])
        options.append(join(facts.home, name))
        if onedrive:
            # Windows with OneDrive backup moves Desktop/Documents into OneDrive.
            options.append(join(onedrive, name))
        candidates[name] = options
    for name in PROJECT_FOLDERS:
        candidates.setdefault("projects", []).append(join(facts.home, name))
    found: dict[str, str] = {}
    for label, options in candidates.items():
        for path in options:
            if facts.exists(path):
                found[label] = path
                break
    return found


def _shell(facts: HostFacts, *, windows: bool) -> str:
    env = facts.environ
    if windows:
        if env.get("PSModulePath") and not env.get("PROMPT"):
            return "PowerShell"
        return "cmd.exe" if env.get("COMSPEC") else "PowerShell"
    shell = env.get("SHELL", "")
    return posixpath.basename(shell) if shell else "sh"


def build_environment(facts: HostFacts, *, local: bool = True) -> dict[str, Any]:
    """Turn raw host facts into the environment document stored in a snapshot
    and read by the prompt block, resolve_path and find_binary."""
    windows = facts.system == "Windows"
    is_wsl = _is_wsl(facts)
    os_name = {"Darwin": "macOS", "Windows": "Windows", "Linux": "Linux"}.get(
        facts.system, facts.system or "unknown"
    )
    if facts.system == "Darwin":
        os_version = facts.version or facts.release
    elif windows:
        os_version = f"{facts.release} ({facts.version})" if facts.version else facts.release
    else:
        os_version = f"{facts.distro} (kernel {facts.release})" if facts.distro else facts.release
    drives = []
    for part in facts.partitions:
        drive: dict[str, Any] = {
            "mount": part.mount,
            "fstype": part.fstype,
            "total_gb": _gb(part.total_bytes),
            "free_gb": _gb(part.free_bytes),
        }
        if windows and len(part.mount) >= 2 and part.mount[1] == ":":
            drive["letter"] = part.mount[0].upper()
        elif part.mount.startswith("/mnt/") and len(part.mount) == 6 and part.mount[5].isalpha():
            # WSL mounts Windows drive C: at /mnt/c.
            drive["letter"] = part.mount[5].upper()
        drives.append(drive)
    drives.sort(key=lambda d: d["mount"])
    pathsep = ";" if windows else ":"
    path_dirs = list(dict.fromkeys(p for p in facts.environ.get("PATH", "").split(pathsep) if p))
    temp = facts.temp or facts.environ.get("TEMP") or facts.environ.get("TMPDIR") or ""
    return {
        "local": local,
        "os": os_name,
        "system": facts.system,
        "os_version": os_version,
        "machine": facts.machine,
        "hostname": facts.hostname,
        "user": facts.user,
        "home": facts.home,
        "path_style": "windows" if windows else "posix",
        "sep": "\\" if windows else "/",
        "is_wsl": is_wsl,
        "wsl_distro": facts.environ.get("WSL_DISTRO_NAME", "") if is_wsl else "",
        "wsl_distros": list(facts.wsl_distros),
        "drives": drives,
        "folders": _folders(facts, windows=windows),
        "shell": _shell(facts, windows=windows),
        "python": facts.python,
        "cpu_count": facts.cpu_count,
        "ram_gb": _gb(facts.ram_total_bytes) if facts.ram_total_bytes else None,
        "temp": temp,
        "path_dirs": path_dirs[:64],
        "binaries": {},
        # Where per-user install roots live on Windows (find_binary looks there).
        "env_dirs": {
            k: facts.environ[k]
            for k in ("LOCALAPPDATA", "APPDATA", "ProgramFiles", "USERPROFILE")
            if windows and facts.environ.get(k)
        },
    }


def probe(facts: HostFacts | None = None) -> dict[str, Any]:
    """The environment document of this host (or of the faked `facts`)."""
    return build_environment(facts if facts is not None else gather_host_facts(), local=True)


__all__ = [
    "KNOWN_FOLDERS",
    "HostFacts",
    "Partition",
    "build_environment",
    "gather_host_facts",
    "probe",
]
