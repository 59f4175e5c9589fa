"""The package is typed (``py.typed``): it passes ``mypy --strict`` as users' type checkers see it."""

from __future__ import annotations

import os

from conftest import PYTHON_DIR
from mypy import api  # in faheemcode[test]


def test_the_package_passes_mypy_strict() -> None:
    out, err, status = api.run(["--strict", "--no-incremental", "--cache-dir", os.devnull, str(PYTHON_DIR / "src" / "faheemcode")])
    assert status == 0, out + err
