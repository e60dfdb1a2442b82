"""The format registry (built-ins and user formats alike) and the package's exported names."""

from __future__ import annotations

import pytest

import dotprompt.formats as formats
from dotprompt.errors import UsageError
from dotprompt.formats import Format, ParsedOutput, UnknownFormatError, define_format, get_format, list_formats


class ShoutHandler:
    """A user format: instructions, whole-text parse, and a stream of upper-cased text."""

    def __init__(self, schema):
        self.instructions = "Answer in capitals."

    def parse_text(self, text):
        return ParsedOutput(text.upper(), [])

    def new_stream(self):
        return ShoutStream()


class ShoutStream:
    def __init__(self):
        self.text = ""

    def feed(self, text):
        self.text += text
        return self.text.upper()


def test_exported_names_are_pinned():
    assert sorted(formats.__all__) == [
        "Format", "FormatHandler", "IncrementalJsonParser", "OutputParseError", "ParsedOutput", "Repair", "StreamParser",
        "UnknownFormatError", "define_format", "extract_json", "get_format", "list_formats",
    ]


def test_builtins_are_registered():
    assert {"array", "enum", "json", "jsonl", "text"} <= set(list_formats())
    assert list_formats() == sorted(list_formats())
    assert all(isinstance(get_format(name), Format) for name in list_formats())


def test_a_user_format_goes_through_the_same_registry():
    define_format(Format(name="test-shout", content_type="text/plain", constrained=False,
                         default_instructions=True, handler=ShoutHandler))
    fmt = get_format("test-shout")
    assert "test-shout" in list_formats()
    built = fmt.handler(None)
    assert built.instructions == "Answer in capitals."
    assert built.parse_text("hi").value == "HI"
    stream = built.new_stream()
    assert [stream.feed("a"), stream.feed("b")] == ["A", "AB"]


def test_redefining_a_name_replaces_it():
    original = get_format("text")
    replacement = Format(name="text", content_type="text/plain", constrained=False, default_instructions=True,
                         handler=ShoutHandler)
    try:
        define_format(replacement)
        assert get_format("text") is replacement
    finally:
        define_format(original)
    assert get_format("text") is original


def test_define_format_rejects_what_is_not_a_format():
    with pytest.raises(UsageError, match="takes a Format"):
        define_format({"name": "x"})  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="non-empty name"):
        define_format(Format(name="", content_type=None, constrained=False, default_instructions=False, handler=ShoutHandler))


@pytest.mark.parametrize(("name", "suggestion"), [("jsonn", "json"), ("aray", "array"), ("JSONL", "jsonl"), ("enums", "enum")])
def test_an_unknown_format_suggests_the_closest_and_lists_all(name, suggestion):
    with pytest.raises(UnknownFormatError) as caught:
        get_format(name)
    message = str(caught.value)
    assert f"did you mean {suggestion!r}?" in message
    assert "known formats: " in message and "array, enum, json, jsonl" in message
    assert not message.startswith("'")  # not KeyError's quoted repr
    assert isinstance(caught.value, KeyError) and isinstance(caught.value, UsageError)


def test_an_unknown_format_far_from_any_name_gets_no_guess():
    with pytest.raises(KeyError, match="known formats") as caught:
        get_format("xml-ish-thing")
    assert "did you mean" not in str(caught.value)
