"""The escaping rule of each output channel, one function per channel in `dotprompt._util.escape`."""

from __future__ import annotations

import json
import math

import pytest

from dotprompt._util import escape
from tests.hostile_strings import HOSTILE, assert_github_safe, assert_markdown_safe, assert_terminal_safe


@pytest.mark.parametrize("text", HOSTILE)
def test_terminal_shows_controls_as_escapes_and_keeps_lines(text):
    shown = escape.terminal(text)
    assert_terminal_safe(shown)
    assert shown.count("\n") == text.count("\n")
    if "\x1b" in text:
        assert "\\x1b" in shown  # visible, not silently dropped


@pytest.mark.parametrize("text", HOSTILE)
def test_terminal_one_line(text):
    shown = escape.terminal(text, lines=False)
    assert "\n" not in shown and "\t" not in shown
    assert_terminal_safe(shown)


@pytest.mark.parametrize("text", HOSTILE)
def test_github_message_and_property(text):
    line = f"::error file={escape.github_property(text)},line=1::{escape.github_message(text)}"
    assert_github_safe(line, expected_commands=1)
    assert "," not in escape.github_property(text) and ":" not in escape.github_property(text)


def test_github_escaping_is_what_the_runner_decodes():
    assert escape.github_message("50%\r\nnext") == "50%25%0D%0Anext"
    assert escape.github_property("a:b,c%") == "a%3Ab%2Cc%25"


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_is_one_literal_line(text):
    shown = escape.markdown(text)
    assert "\n" not in shown and "\r" not in shown
    assert_markdown_safe(f"| {shown} |\n", text)
    assert "|" not in shown.replace("\\|", "")


def test_markdown_escapes_syntax_and_html():
    assert escape.markdown("*a* [b](c) <!-- x & y") == "\\*a\\* \\[b\\](c) &lt;!-- x &amp; y"
    assert escape.markdown("one\ntwo") == "one<br>two"


@pytest.mark.parametrize("text", HOSTILE)
def test_xml_text_parses(text, tmp_path):
    import xml.etree.ElementTree as ET

    root = ET.Element("r", name=escape.xml_text(text))
    root.text = escape.xml_text(text)
    path = tmp_path / "r.xml"
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    assert ET.parse(path).getroot().get("name") == escape.xml_text(text)


def test_json_never_writes_non_finite_numbers():
    value = {"a": math.nan, "b": [math.inf, -math.inf, 1.5], "c": "NaN"}
    assert json.loads(escape.json_dumps(value)) == {"a": None, "b": [None, None, 1.5], "c": "NaN"}
    assert escape.json_dumps({"x": "é"}) == '{"x": "é"}'


def test_json_non_finite_inside_a_default_conversion():
    class Thing:
        pass

    text = escape.json_dumps({"t": Thing()}, default=lambda o: {"v": math.nan})
    assert json.loads(text) == {"t": {"v": None}}
