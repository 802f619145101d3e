"""resolve_path and find_binary over faked Linux, macOS, Windows and WSL hosts."""

from __future__ import annotations

import pytest

from environment.paths import find_binary, resolve_path
from environment.probe import build_environment
from tests.environment import hosts

LINUX = hosts.linux_host()
WSL = hosts.wsl_host()
WIN = hosts.windows_host()
MAC = hosts.mac_host()

CASES = [
    # (host, typed path, resolved path, exists, words the reason must contain)
    (LINUX, "~/Downloads/x", "/home/ana/Downloads/x", False, "home"),
    (LINUX, "~", "/home/ana", True, "home"),
    (LINUX, "Desktop\\a.txt", "/home/ana/Desktop/a.txt", False, "Desktop is /home/ana/Desktop"),
    (LINUX, "Documents/report.pdf", "/home/ana/Documents/report.pdf", False, "Documents is"),
    (LINUX, "documents", "/home/ana/Documents", True, "Documents is"),
    (LINUX, "notes/todo.txt", "/home/ana/notes/todo.txt", False, "relative"),
    (LINUX, "..", "/home", False, "relative"),
    (LINUX, "projects/../Desktop", "/home/ana/Desktop", True, "projects is"),
    (LINUX, "/etc/hosts", "/etc/hosts", False, "absolute"),
    (LINUX, "C:/Users/ana/x", "/mnt/c/Users/ana/x", False, "not WSL"),
    (LINUX, "\\\\wsl$\\Ubuntu\\home\\a", "\\\\wsl$\\Ubuntu\\home\\a", False, "UNC"),
    (WSL, "C:/Users/ana/x", "/mnt/c/Users/ana/x", False, "mounted at /mnt/c under WSL"),
    (WSL, "C:\\Users\\ana", "/mnt/c/Users/ana", True, "WSL"),
    (WSL, "~/projects", "/home/ana/projects", True, "home"),
    (WSL, "\\\\wsl$\\Ubuntu\\home\\a", "\\\\wsl$\\Ubuntu\\home\\a", False, "UNC"),
    (WIN, "/mnt/c/Users/ana/file.txt", "C:\\Users\\ana\\file.txt", False, "drive C:"),
    (WIN, "/mnt/c", "C:\\", False, "drive C:"),
    (WIN, "C:/Users/ana/Desktop", "C:\\Users\\ana\\Desktop", True, "Windows path"),
    (WIN, "c:\\users\\ana\\x.txt", "C:\\users\\ana\\x.txt", False, "Windows path"),
    (WIN, "E:\\data\\x", "E:\\data\\x", False, "drive E: does not exist"),
    (WIN, "~/Downloads/x", "C:\\Users\\ana\\Downloads\\x", False, "home"),
    (WIN, "Desktop\\a.txt", "C:\\Users\\ana\\Desktop\\a.txt", False, "Desktop is"),
    (
        WIN,
        "Documents/report.pdf",
        "C:\\Users\\ana\\OneDrive\\Documents\\report.pdf",
        False,
        "OneDrive",
    ),
    (WIN, "\\\\wsl$\\Ubuntu\\home\\a", "\\\\wsl$\\Ubuntu\\home\\a", False, "UNC"),
    (WIN, "/home/ana/x", "/home/ana/x", False, "POSIX path on a Windows host"),
    (WIN, "..\\x", "C:\\Users\\x", False, "relative"),
    (
        MAC,
        "~/Library/Application Support/x",
        "/Users/ana/Library/Application Support/x",
        False,
        "home",
    ),
    (MAC, "~/Library", "/Users/ana/Library", True, "home"),
    (MAC, "Downloads/a.zip", "/Users/ana/Downloads/a.zip", False, "Downloads is"),
    (MAC, "C:/Users/ana/x", "C:/Users/ana/x", False, "macOS"),
    (MAC, "projects/app", "/Users/ana/code/app", False, "projects is /Users/ana/code"),
]


@pytest.mark.parametrize(("host", "typed", "expected", "exists", "reason"), CASES)
def test_it_resolves_typed_paths_per_host(host, typed, expected, exists, reason) -> None:  # type: ignore[no-untyped-def]
    env = build_environment(host, local=True)
    result = resolve_path(typed, env=env, exists=host.exists)
    assert result.path == expected
    assert result.exists is exists
    assert reason in result.reason


def test_it_refuses_an_empty_path() -> None:
    with pytest.raises(ValueError, match="empty"):
        resolve_path("   ", env=build_environment(LINUX))


def test_it_does_not_claim_existence_on_a_host_it_cannot_see() -> None:
    env = build_environment(WIN, local=False)
    assert resolve_path("C:/Users/ana", env=env).exists is None


def test_it_finds_binaries_on_path_then_install_roots() -> None:
    linux = build_environment(LINUX)
    assert (
        find_binary("git", env=linux, is_executable={"/usr/bin/git"}.__contains__) == "/usr/bin/git"
    )
    local_bin = "/home/ana/.local/bin/uv"
    assert find_binary("uv", env=linux, is_executable={local_bin}.__contains__) == local_bin
    assert find_binary("nope", env=linux, is_executable=lambda _p: False) is None

    win = build_environment(WIN)
    tesseract = "C:\\Program Files\\Tesseract-OCR\\Tesseract-OCR.exe"
    assert (
        find_binary("Tesseract-OCR", env=win, is_executable={tesseract}.__contains__) == tesseract
    )
    py = "C:\\Python312\\python.exe"
    assert find_binary("python", env=win, is_executable={py}.__contains__) == py

    mac = build_environment(MAC)
    brew = "/opt/homebrew/bin/ffmpeg"
    assert find_binary("ffmpeg", env=mac, is_executable={brew}.__contains__) == brew


def test_it_answers_from_reported_binaries_for_remote_hosts() -> None:
    env = build_environment(WIN, local=False)
    env["binaries"] = {"code": "C:\\Users\\ana\\AppData\\Local\\Programs\\VS Code\\Code.exe"}
    assert find_binary("code", env=env) == env["binaries"]["code"]
    assert find_binary("git", env=env) is None  # cannot look on a machine we do not run on
    with pytest.raises(ValueError):
        find_binary("../bin/sh", env=env)
