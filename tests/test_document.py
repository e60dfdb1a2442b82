"""The file format: frontmatter detection, keys, ext, raw, errors with file lines."""

from __future__ import annotations

import pytest

from dotprompt import PromptFileError, PromptLibrary
from dotprompt.document.parse import parse_source


def render(source: str, input=None, **kwargs):
    return PromptLibrary(None).from_source(source).render(input, **kwargs)


def test_no_frontmatter_keeps_the_whole_source_with_trailing_newline():
    out = render("Hello, {{ name }}!\n", {"name": "Ann"})
    assert out.to_dict()["messages"] == [{"role": "user", "content": [{"text": "Hello, Ann!\n"}]}]


def test_frontmatter_body_is_stripped_of_surrounding_whitespace():
    out = render("---\nmodel: m\n---\n\n\n  Hi {{ x }}  \n\n", {"x": 1})
    assert out.messages[0].content[0].text == "Hi 1"
    assert out.model == "m"


@pytest.mark.parametrize("newline", ["\r\n", "\r", "\n"])
def test_all_line_endings_are_accepted(newline):
    source = newline.join(["---", "model: m", "config:", "  temperature: 1", "---", "Body"])
    out = render(source)
    assert out.model == "m" and out.config == {"temperature": 1}
    assert out.messages[0].content[0].text == "Body"


def test_license_comment_lines_may_precede_frontmatter():
    out = render("# Copyright 2026\n# SPDX: Apache-2.0\n\n---\nmodel: m\n---\nBody")
    assert out.model == "m"
    assert out.messages[0].content[0].text == "Body"


def test_empty_frontmatter_is_valid_and_empty():
    out = render("---\n---\nJust text")
    assert out.raw == {}
    assert out.config == {} and out.ext == {} and out.metadata == {}
    assert out.messages[0].content[0].text == "Just text"


def test_empty_body_renders_no_messages():
    assert render("---\nmodel: m\n---\n").messages == []


def test_dotted_keys_go_to_ext_split_at_the_last_dot():
    out = render("---\nmyapp.owner: team-a\next1.sub1.foo: baz\n---\nx")
    assert out.ext == {"myapp": {"owner": "team-a"}, "ext1.sub1": {"foo": "baz"}}


def test_raw_is_the_parsed_yaml_verbatim_and_unknown_keys_stay_only_there():
    out = render("---\nmax_turns: 3\nconfig: {temperature: 2}\n---\nx")
    assert out.raw == {"max_turns": 3, "config": {"temperature": 2}}
    assert out.max_turns is None
    assert "max_turns" not in out.to_dict()


def test_all_known_keys_in_camel_case_reach_the_result():
    out = render(
        "---\nname: n\nvariant: v\nversion: 2\ndescription: d\nmodel: m\nconfig: {a: 1}\n"
        "tools: [t1]\ntoolDefs: [{name: t2, description: two, inputSchema: {type: object}}]\n"
        "maxTurns: 3\ntoolChoice: required\nreturnToolRequests: true\nmetadata: {owner: me}\n---\nx"
    )
    shape = out.to_dict()
    assert shape["name"] == "n" and shape["variant"] == "v" and shape["version"] == 2
    assert shape["maxTurns"] == 3 and shape["toolChoice"] == "required" and shape["returnToolRequests"] is True
    assert shape["tools"] == ["t1"] and shape["toolDefs"][0]["name"] == "t2"
    assert out.tool_defs[0].input_schema == {"type": "object"}
    assert shape["metadata"] == {"owner": "me"}


def test_metadata_is_kept():
    assert render("---\nmetadata: {team: search, tier: 2}\n---\nx").metadata == {"team": "search", "tier": 2}


def errors_of(source: str) -> PromptFileError:
    with pytest.raises(PromptFileError) as caught:
        PromptLibrary(None).from_source(source, path="prompts/p.prompt")
    return caught.value


def test_broken_yaml_names_the_file_line():
    error = errors_of("# header\n---\nmodel: m\nconfig: [unclosed\n---\nx")
    assert error.path == "prompts/p.prompt"
    assert error.line in (4, 5)
    assert "invalid YAML" in str(error)


def test_frontmatter_that_is_not_a_mapping_is_an_error():
    error = errors_of("---\n- a\n- b\n---\nx")
    assert "mapping" in error.message and error.line == 2


def test_wrong_value_type_points_at_the_key():
    error = errors_of("---\nmodel: m\nmaxTurns: lots\n---\nx")
    assert error.line == 3 and error.column == 1
    assert "`maxTurns` must be an integer" in error.message


def test_unknown_output_key_suggests_the_right_one():
    error = errors_of("---\noutput:\n  shema: string\n---\nx")
    assert error.line == 3 and "did you mean `schema`" in str(error)


def test_bad_tool_choice_is_an_error_with_line():
    error = errors_of("---\ntoolChoice: sometimes\n---\nx")
    assert error.line == 2 and "auto, required, none" in error.message


def test_empty_source_is_a_prompt_of_no_messages():
    # As dotpromptz renders it (issue 29): `dotprompt check` warns instead (tests/test_genkit_file_shapes.py).
    src = parse_source("  \n\n", "prompts/p.prompt")
    assert src.template == "" and src.raw == {} and src.yaml_line == 0


def test_error_renders_as_path_line_col():
    error = errors_of("---\nmaxTurns: 0\n---\nx")
    assert str(error).startswith("prompts/p.prompt:2:1: error: `maxTurns` must be at least 1")
