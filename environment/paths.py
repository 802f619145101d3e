"""Path assist: turn the path a user typed into the host's absolute form.

Both helpers read an environment document (see environment.probe) and never
guess: every answer carries the reason it was resolved that way, and on a host
that is not the server's own the file system cannot be checked, so `exists` is
None there instead of a made-up answer.
"""

from __future__ import annotations

import ntpath
import os
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from environment.probe import KNOWN_FOLDERS

_DRIVE = re.compile(r"^([A-Za-z]):(?:[\\/]|$)")
_MNT = re.compile(r"^/mnt/([A-Za-z])(?:/|$)")
_FOLDER_NAMES = {name.lower(): name for name in (*KNOWN_FOLDERS, "projects")}


@dataclass(frozen=True)
class ResolvedPath:
    path: str
    exists: bool | None  # None: the host is not this server, nothing was checked
    reason: str


def _checker(
    env: dict[str, Any], exists: Callable[[str], bool] | None
) -> Callable[[str], bool | None]:
    if exists is not None:
        return exists
    if env.get("local"):
        return os.path.exists
    return lambda _p: None


def _drive_letters(env: dict[str, Any]) -> set[str]:
    return {str(d["letter"]).upper() for d in env.get("drives", []) if d.get("letter")}


def _is_windows(env: dict[str, Any]) -> bool:
    return env.get("path_style") == "windows"


def _home(env: dict[str, Any]) -> str:
    return str(env.get("home") or ("C:\\" if _is_windows(env) else "/"))


def resolve_path(
    path: str, *, env: dict[str, Any], exists: Callable[[str], bool] | None = None
) -> ResolvedPath:
    """Resolve `path` for the host described by `env`. Raises ValueError for
    an empty path. `exists` overrides the file-system check (faked hosts)."""
    raw = path.strip()
    if not raw:
        raise ValueError("path must not be empty")
    check = _checker(env, exists)
    windows = _is_windows(env)
    mod = ntpath if windows else posixpath
    home = _home(env)

    def done(result: str, reason: str) -> ResolvedPath:
        return ResolvedPath(path=result, exists=check(result), reason=reason)

    # UNC paths (\\wsl$\Ubuntu\..., \\server\share\...) name another machine's
    # or distro's file system exactly; rewriting them would only break them.
    if raw.startswith("\\\\") or raw.startswith("//"):
        return done(raw, "UNC path passed through unchanged")

    drive = _DRIVE.match(raw)
    if drive:
        letter = drive.group(1).upper()
        rest = raw[2:].replace("\\", "/").lstrip("/")
        if windows:
            result = ntpath.normpath(f"{letter}:\\{rest}")
            letters = _drive_letters(env)
            if letters and letter not in letters:
                known = ", ".join(f"{x}:\\" for x in sorted(letters))
                return ResolvedPath(
                    path=result,
                    exists=False,
                    reason=f"drive {letter}: does not exist on this host (drives: {known})",
                )
            return done(result, "Windows path, separators normalised")
        if env.get("os") == "macOS":
            return ResolvedPath(
                path=raw,
                exists=False,
                reason=f"a Windows drive path ({letter}:) does not exist on this macOS host; "
                f"home is {home}",
            )
        result = (
            posixpath.normpath(f"/mnt/{letter.lower()}/{rest}")
            if rest
            else f"/mnt/{letter.lower()}"
        )
        why = (
            f"Windows drive {letter}: is mounted at /mnt/{letter.lower()} under WSL"
            if env.get("is_wsl")
            else f"Windows drive {letter}: mapped to /mnt/{letter.lower()} (the WSL convention); "
            "this Linux host is not WSL, so it exists only if mounted there"
        )
        return done(result, why)

    mnt = _MNT.match(raw)
    if mnt and windows:
        letter = mnt.group(1).upper()
        rest = raw[len(mnt.group(0)) :].replace("/", "\\")
        result = ntpath.normpath(f"{letter}:\\{rest}")
        return done(result, f"WSL mount /mnt/{letter.lower()} is drive {letter}: on Windows")

    if raw == "~" or raw.startswith(("~/", "~\\")):
        rest = raw[2:].replace("\\" if not windows else "/", mod.sep)
        result = mod.normpath(mod.join(home, rest)) if rest else home
        return done(result, f"~ is the home folder {home}")

    if raw.startswith("/") and windows:
        return ResolvedPath(
            path=raw,
            exists=False,
            reason=f"POSIX path on a Windows host; use a drive path such as {home}",
        )
    if raw.startswith("\\") and not windows:
        return ResolvedPath(
            path=raw.replace("\\", "/"),
            exists=False,
            reason="a backslash-rooted path has no meaning on a POSIX host",
        )
    if mod.isabs(raw):
        return done(mod.normpath(raw), "absolute path")

    # Relative: a leading known-folder name ("Desktop\\a.txt") goes to that
    # folder, anything else is relative to home (the server has no cwd that
    # means anything to the user).
    parts = re.split(r"[\\/]+", raw)
    folders: dict[str, str] = env.get("folders") or {}
    label = _FOLDER_NAMES.get(parts[0].lower())
    if label is not None:
        base = folders.get(label) or mod.join(home, label)
        rest_parts = [p for p in parts[1:] if p]
        result = mod.normpath(mod.join(base, *rest_parts)) if rest_parts else base
        if label in folders:
            return done(result, f"{label} is {base}")
        return done(result, f"{label} was not found on this host; assumed {base}")
    result = mod.normpath(mod.join(home, *[p for p in parts if p]))
    return done(result, f"relative path resolved against home {home}")


_WINDOWS_EXTS = (".exe", ".cmd", ".bat", ".com")


def _install_roots(env: dict[str, Any]) -> list[str]:
    home = _home(env)
    if _is_windows(env):
        e = env.get("env_dirs") or {}
        local_app = e.get("LOCALAPPDATA") or f"{home}\\AppData\\Local"
        return [
            "C:\\Program Files",
            "C:\\Program Files (x86)",
            f"{local_app}\\Programs",
            f"{local_app}\\Microsoft\\WindowsApps",
            "C:\\ProgramData\\chocolatey\\bin",
            f"{home}\\scoop\\shims",
        ]
    roots = [
        "/usr/local/bin",
        "/usr/bin",
        "/bin",
        "/usr/sbin",
        posixpath.join(home, ".local/bin"),
        posixpath.join(home, ".cargo/bin"),
        posixpath.join(home, "go/bin"),
    ]
    if env.get("os") == "macOS":
        roots = ["/opt/homebrew/bin", *roots, "/Applications"]
    else:
        roots += ["/snap/bin", "/opt"]
    return roots


def binary_candidates(name: str, *, env: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(directories searched, candidate file paths in order) for `name`."""
    windows = _is_windows(env)
    mod = ntpath if windows else posixpath
    dirs = [d for d in env.get("path_dirs", []) if d]
    roots = _install_roots(env)
    searched = list(dict.fromkeys([*dirs, *roots]))
    names = [name]
    if windows and not name.lower().endswith(_WINDOWS_EXTS):
        names = [name + ext for ext in _WINDOWS_EXTS] + [name]
    candidates: list[str] = []
    for d in dirs:
        candidates += [mod.join(d, n) for n in names]
    for root in roots:
        candidates += [mod.join(root, n) for n in names]
        if windows:
            # Program Files\<Tool>\<tool>.exe and ...\<Tool>\bin\<tool>.exe
            candidates += [mod.join(root, name, n) for n in names]
            candidates += [mod.join(root, name, "bin", n) for n in names]
        elif root == "/Applications":
            app = name[:1].upper() + name[1:]
            candidates.append(f"/Applications/{app}.app/Contents/MacOS/{app}")
        elif root == "/opt":
            candidates.append(posixpath.join("/opt", name, "bin", name))
    return searched, list(dict.fromkeys(candidates))


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_binary(
    name: str, *, env: dict[str, Any], is_executable: Callable[[str], bool] | None = None
) -> str | None:
    """Where `name` lives on the host: PATH first, then well-known install
    roots. For a host that is not this server, only what its agent reported
    (env["binaries"]) is known."""
    name = name.strip()
    if not name or "/" in name or "\\" in name:
        raise ValueError("name must be a bare program name, without directories")
    reported: dict[str, str] = env.get("binaries") or {}
    if name in reported:
        return reported[name]
    if is_executable is None:
        if not env.get("local"):
            return None
        is_executable = _is_executable
    _, candidates = binary_candidates(name, env=env)
    for path in candidates:
        if is_executable(path):
            return path
    return None
