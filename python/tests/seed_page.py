"""The seed page's ready-to-run example, taken from the page unchanged."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import ROOT

NAME = "seed-pause-and-resume.txt"
FIXTURE = Path(__file__).resolve().parent / "fixtures" / NAME

#: The example as the repository ships it (the README runs it): the page's, byte for byte.
EXAMPLE = ROOT / "examples" / "pause-and-resume.py"

START = "Pause agent execution mid-task by calling conversation.pause():\n"
END = "You can run the example code as-is.\n"


def ready_to_run_example(page: str) -> str:
    """The lines between the page's "Ready-to-run example" lead-in and "You can run the example code
    as-is.", byte for byte (only the blank lines around it are left out)."""
    start = page.index(START) + len(START)
    end = page.index(END, start)
    return page[start:end].strip("\n") + "\n"


def original_page_places() -> list[Path]:
    """Where the page the product started from may be: FAHEEM_SEED_PAGE when set (then only there);
    else in shared/ beside the repository (the issue's ../shared/), and beside the repository this
    clone was made from when that is a folder on this machine (a fresh clone for the CI, say
    /tmp/ci-check, has no ../shared of its own)."""
    named = os.environ.get("FAHEEM_SEED_PAGE")
    if named:
        return [Path(named)]
    places = [ROOT.parent / "shared" / NAME]
    origin = _origin_folder()
    if origin is not None:
        places.append(origin.parent / "shared" / NAME)
    return places


def _origin_folder() -> Path | None:
    """The repository this clone was made from, when its origin is a path on this machine."""
    try:
        url = subprocess.run(
            ["git", "-C", str(ROOT), "config", "--get", "remote.origin.url"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        return None
    url = url.removeprefix("file://")
    if not url.startswith("/"):
        return None
    folder = Path(url)
    return folder.parent if folder.name == ".git" else folder
