"""Faked hosts for the probe boundary: each is a HostFacts with its own file
system, so the whole probe → snapshot → block → resolve path runs for real."""

from __future__ import annotations

from environment.probe import HostFacts, Partition

GB = 1024**3


def linux_host(*, extra_dirs: tuple[str, ...] = (), python: str = "3.11.9") -> HostFacts:
    dirs = {
        "/home/ana",
        "/home/ana/Desktop",
        "/home/ana/Documents",
        "/home/ana/Downloads",
        "/home/ana/projects",
        *extra_dirs,
    }
    return HostFacts(
        system="Linux",
        release="6.8.0-45-generic",
        version="#45-Ubuntu SMP",
        machine="x86_64",
        hostname="ana-laptop",
        user="ana",
        home="/home/ana",
        environ={"SHELL": "/usr/bin/zsh", "PATH": "/usr/local/bin:/usr/bin:/bin"},
        python=python,
        cpu_count=8,
        ram_total_bytes=16 * GB,
        partitions=[
            Partition(
                mount="/",
                device="/dev/nvme0n1p2",
                fstype="ext4",
                total_bytes=500 * GB,
                free_bytes=120 * GB,
            )
        ],
        exists=dirs.__contains__,
        temp="/tmp",
        distro="Ubuntu 24.04.1 LTS",
    )


def wsl_host() -> HostFacts:
    dirs = {"/home/ana", "/home/ana/projects", "/mnt/c", "/mnt/c/Users/ana"}
    return HostFacts(
        system="Linux",
        release="5.15.153.1-microsoft-standard-WSL2",
        version="#1 SMP",
        machine="x86_64",
        hostname="ANA-PC",
        user="ana",
        home="/home/ana",
        environ={"SHELL": "/bin/bash", "WSL_DISTRO_NAME": "Ubuntu", "PATH": "/usr/bin:/bin"},
        python="3.12.3",
        partitions=[
            Partition(mount="/", fstype="ext4", total_bytes=1000 * GB, free_bytes=900 * GB),
            Partition(mount="/mnt/c", fstype="9p", total_bytes=475 * GB, free_bytes=80 * GB),
        ],
        exists=dirs.__contains__,
        temp="/tmp",
        distro="Ubuntu 22.04.4 LTS",
    )


def windows_host() -> HostFacts:
    dirs = {
        "C:\\Users\\ana",
        "C:\\Users\\ana\\Desktop",
        "C:\\Users\\ana\\OneDrive\\Documents",
        "C:\\Users\\ana\\Downloads",
    }
    return HostFacts(
        system="Windows",
        release="11",
        version="10.0.22631",
        machine="AMD64",
        hostname="ANA-PC",
        user="ana",
        home="C:\\Users\\ana",
        environ={
            "PSModulePath": "C:\\Program Files\\WindowsPowerShell\\Modules",
            "OneDrive": "C:\\Users\\ana\\OneDrive",
            "LOCALAPPDATA": "C:\\Users\\ana\\AppData\\Local",
            "PATH": "C:\\Windows\\system32;C:\\Python312\\",
        },
        python="3.12.4",
        partitions=[
            Partition(mount="C:\\", fstype="NTFS", total_bytes=475 * GB, free_bytes=120 * GB),
            Partition(mount="D:\\", fstype="NTFS", total_bytes=2000 * GB, free_bytes=512 * GB),
        ],
        wsl_distros=["Ubuntu", "Debian"],
        exists=dirs.__contains__,
        temp="C:\\Users\\ana\\AppData\\Local\\Temp",
    )


def mac_host() -> HostFacts:
    dirs = {
        "/Users/ana",
        "/Users/ana/Desktop",
        "/Users/ana/Documents",
        "/Users/ana/Downloads",
        "/Users/ana/code",
        "/Users/ana/Library",
    }
    return HostFacts(
        system="Darwin",
        release="23.5.0",
        version="14.5",
        machine="arm64",
        hostname="anas-mbp",
        user="ana",
        home="/Users/ana",
        environ={"SHELL": "/bin/zsh", "PATH": "/opt/homebrew/bin:/usr/bin:/bin"},
        python="3.12.4",
        partitions=[Partition(mount="/", fstype="apfs", total_bytes=994 * GB, free_bytes=300 * GB)],
        exists=dirs.__contains__,
        temp="/var/folders/xy/T",
    )
