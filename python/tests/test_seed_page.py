"""The committed copy of the seed page is the page itself, and the example taken from it is the script."""

from __future__ import annotations

import os

import pytest

from seed_page import EXAMPLE, FIXTURE, original_page_places, ready_to_run_example


def test_the_fixture_is_the_seed_page_byte_for_byte() -> None:
    places = original_page_places()
    page = next((p for p in places if p.exists()), None)
    if page is None:
        why = f"the seed page is not on this machine (looked at {', '.join(map(str, places))})"
        # A page named by FAHEEM_SEED_PAGE must be there; and the CI sets FAHEEM_TEST_REQUIRE_SEED_PAGE=1,
        # so that a comparison it cannot make fails there, never passes as a skip.
        if os.environ.get("FAHEEM_SEED_PAGE") or os.environ.get("FAHEEM_TEST_REQUIRE_SEED_PAGE") == "1":
            pytest.fail(f"{why} (FAHEEM_TEST_REQUIRE_SEED_PAGE=1; FAHEEM_SEED_PAGE names the page)")
        pytest.skip(f"{why}: the committed copy is used")
    assert FIXTURE.read_bytes() == page.read_bytes()


def test_the_example_is_the_whole_script() -> None:
    script = ready_to_run_example(FIXTURE.read_text(encoding="utf-8"))
    assert script.startswith("import os\nimport threading\nimport time\n")
    assert script.rstrip().endswith('print(f"EXAMPLE_COST: {cost}")')
    compile(script, "seed.py", "exec")  # it is Python as it stands


def test_the_shipped_example_is_the_pages_byte_for_byte() -> None:
    assert EXAMPLE.read_bytes() == ready_to_run_example(FIXTURE.read_text(encoding="utf-8")).encode("utf-8")
