"""Screenshots of the browser tests: saved under ENGRAM_SCREENSHOTS when it
names a folder (CI and a person reviewing the panel), skipped otherwise."""

from __future__ import annotations

import os
from pathlib import Path


def shot(driver, name: str) -> None:  # type: ignore[no-untyped-def]
    folder = os.environ.get("ENGRAM_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(folder) / f"{name}.png"))
