"""Hostile YAML frontmatter: bounded work, located errors, JSON-able values, nothing silently dropped.

Each case loads a prompt file in a child process with time and memory limits; the child prints the
outcome as JSON: {"error": type, "message": ...} or {"ok": the rendered prompt's JSON shape}.
"""

from __future__ import annotations

import json

import pytest

from tests.isolation import assert_finishes

CHILD = """
import json
from dotprompt import PromptLibrary
lib = PromptLibrary({folder!r})
try:
    shape = lib.load("p").render({{}}).to_dict()
    text = json.dumps(shape)  # what `render --json` prints
except Exception as exc:
    print(json.dumps({{"error": type(exc).__name__, "message": str(exc)}}))
else:
    print(json.dumps({{"ok": shape}}))
"""


def load(tmp_path, text: str | bytes) -> dict:
    target = tmp_path / "p.prompt"
    if isinstance(text, bytes):
        target.write_bytes(text)
    else:
        target.write_text(text, encoding="utf-8")
    return assert_finishes(CHILD.format(folder=str(tmp_path)), memory_mb=512).json()


BILLION_LAUGHS = "---\nmetadata:\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"  {chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8)
) + "---\nhi\n"


def test_alias_bomb_is_refused_quickly_with_a_location(tmp_path):
    result = load(tmp_path, BILLION_LAUGHS)
    assert result.get("error") == "PromptFileError", result
    assert "p.prompt:" in result["message"] and "alias" in result["message"]


def test_recursive_alias_is_a_located_error(tmp_path):
    result = load(tmp_path, "---\nmetadata:\n  loop: &x [1, *x]\n---\nhi\n")
    assert result.get("error") == "PromptFileError", result
    assert "p.prompt:3" in result["message"]


def test_modest_aliases_keep_working(tmp_path):
    result = load(tmp_path, "---\nconfig: &c {temperature: 0.5}\nmetadata:\n  same: *c\n---\nhi\n")
    assert result["ok"]["config"] == {"temperature": 0.5} and result["ok"]["metadata"]["same"] == {"temperature": 0.5}


def test_bom_before_frontmatter_is_accepted(tmp_path):
    result = load(tmp_path, "\ufeff---\nmodel: echo\n---\nhello\n".encode())
    assert result["ok"]["model"] == "echo"
    assert result["ok"]["messages"][0]["content"][0]["text"].strip() == "hello"


def test_duplicate_key_names_both_lines(tmp_path):
    result = load(tmp_path, "---\nmodel: echo\nconfig: {}\nmodel: other\n---\nhi\n")
    assert result.get("error") == "PromptFileError", result
    assert "p.prompt:4" in result["message"] and "line 2" in result["message"] and "model" in result["message"]


def test_nested_duplicate_key_is_an_error(tmp_path):
    result = load(tmp_path, "---\nconfig:\n  temperature: 1\n  temperature: 0\n---\nhi\n")
    assert result.get("error") == "PromptFileError", result
    assert "p.prompt:4" in result["message"] and "line 3" in result["message"]


def test_merge_keys_may_override(tmp_path):
    result = load(tmp_path, "---\nmetadata:\n  base: &b {x: 1, y: 2}\n  more:\n    <<: *b\n    y: 3\n---\nhi\n")
    assert result["ok"]["metadata"]["more"] == {"x": 1, "y": 3}


def test_dates_become_the_iso_text_written(tmp_path):
    result = load(tmp_path, "---\nmetadata: {d: 2024-01-01, t: 2024-01-01T10:00:00Z}\n---\nhi\n")
    assert result["ok"]["metadata"] == {"d": "2024-01-01", "t": "2024-01-01T10:00:00Z"}


@pytest.mark.slow
def test_sets_binary_and_pairs_are_located_errors(tmp_path):
    for line, value in enumerate(["!!set {a, b}", "!!binary aGk=", "!!omap [a: 1]", "!!pairs [a: 1]"]):
        result = load(tmp_path, f"---\nmodel: echo\nmetadata:\n  v: {value}\n---\nhi\n")
        assert result.get("error") == "PromptFileError", (value, result)
        assert "p.prompt:4" in result["message"], (line, result)


@pytest.mark.slow
def test_nan_and_infinity_are_located_errors(tmp_path):
    for value in (".nan", ".inf", "-.Inf"):
        result = load(tmp_path, f"---\nmodel: echo\nconfig:\n  temperature: {value}\n---\nhi\n")
        assert result.get("error") == "PromptFileError", (value, result)
        assert "p.prompt:4" in result["message"] and "temperature" in result["message"]


@pytest.mark.slow
def test_bad_use_arguments_are_located_errors(tmp_path):
    cases = ["[{retry: 5}]", "[{retry: {bogus: 1}}]", "[{fallback: [a, b]}]", "[42]",
             "[{validate_and_retry: {max_attempts: 1}, retry: {x: 1}}]"]
    for use in cases:
        code = f"""
import json
from dotprompt import PromptLibrary
from dotprompt.doubles import ScriptedModel
lib = PromptLibrary({str(tmp_path)!r})
try:
    lib.load("p").generate_sync({{}}, model=ScriptedModel(["ok"]))
except Exception as exc:
    print(json.dumps({{"error": type(exc).__name__, "message": str(exc)}}))
else:
    print(json.dumps({{"ok": True}}))
"""
        (tmp_path / "p.prompt").write_text(f"---\nmodel: echo\nuse: {use}\n---\nhi\n")
        result = assert_finishes(code).json()
        assert result.get("error") == "PromptFileError", (use, result)
        assert "p.prompt:3" in result["message"] and "use" in result["message"], (use, result)


def test_good_use_arguments_keep_working(tmp_path):
    result = load(tmp_path, "---\nuse: [audit, {retry: {max_retries: 1, initial_delay: 0}}]\n---\nhi\n")
    assert result["ok"]["use"] == ["audit", {"retry": {"max_retries": 1, "initial_delay": 0}}]
    json.dumps(result)
