"""The child-process harness the hostile-input tests rely on: hangs and blow-ups are caught."""

from __future__ import annotations

import pytest

from tests.isolation import assert_finishes, run_limited


@pytest.mark.slow
def test_a_hang_is_reported_as_timed_out():
    outcome = run_limited("while True: pass", timeout=2)
    assert outcome.timed_out


def test_a_memory_blow_up_fails_in_the_child():
    outcome = run_limited("x = bytearray(2 * 1024 ** 3)", memory_mb=512)
    assert not outcome.timed_out and outcome.returncode != 0 and "MemoryError" in outcome.stderr


def test_the_package_is_importable_and_json_comes_back():
    outcome = assert_finishes("import json, dotprompt; print(json.dumps({'ok': hasattr(dotprompt, 'load_prompt')}))")
    assert outcome.json() == {"ok": True}
