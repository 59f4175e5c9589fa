"""The package is typed (``py.typed``) and kept to one style: ``mypy --strict`` over the package as
users' type checkers see it, and ruff's lint and format check over the package and its tests."""

from __future__ import annotations

import os
import subprocess
import sys

from mypy import api  # in faheemcode[test], as is ruff

from conftest import PYTHON_DIR


def test_the_package_passes_mypy_strict() -> None:
    out, err, status = api.run(
        ["--strict", "--no-incremental", "--cache-dir", os.devnull, str(PYTHON_DIR / "src" / "faheemcode")]
    )
    assert status == 0, out + err


def test_ruff_finds_nothing_to_change() -> None:
    for args in (["check", "--no-cache"], ["format", "--check", "--no-cache"]):
        r = subprocess.run(
            [sys.executable, "-m", "ruff", *args, "."], cwd=PYTHON_DIR, capture_output=True, text=True
        )
        assert r.returncode == 0, r.stdout + r.stderr
