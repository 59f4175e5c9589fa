"""The committed copy of the seed page is the page itself, and the example taken from it is the script."""

from __future__ import annotations

import pytest

from seed_page import EXAMPLE, FIXTURE, ORIGINAL, ready_to_run_example


def test_the_fixture_is_the_seed_page_byte_for_byte() -> None:
    if not ORIGINAL.exists():
        pytest.skip(f"{ORIGINAL} is not on this machine (the committed copy is used)")
    assert FIXTURE.read_bytes() == ORIGINAL.read_bytes()


def test_the_example_is_the_whole_script() -> None:
    script = ready_to_run_example(FIXTURE.read_text(encoding="utf-8"))
    assert script.startswith("import os\nimport threading\nimport time\n")
    assert script.rstrip().endswith('print(f"EXAMPLE_COST: {cost}")')
    compile(script, "seed.py", "exec")  # it is Python as it stands


def test_the_shipped_example_is_the_pages_byte_for_byte() -> None:
    assert EXAMPLE.read_bytes() == ready_to_run_example(FIXTURE.read_text(encoding="utf-8")).encode("utf-8")
