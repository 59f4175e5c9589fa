"""The seed page's ready-to-run example, taken from the page unchanged."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import ROOT

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "seed-pause-and-resume.txt"
#: The page the product started from, beside the repository (the issue's ../shared/); FAHEEM_SEED_PAGE overrides.
ORIGINAL = Path(os.environ.get("FAHEEM_SEED_PAGE") or ROOT.parent / "shared" / "seed-pause-and-resume.txt")

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
