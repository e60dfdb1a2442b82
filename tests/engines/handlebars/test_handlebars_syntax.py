"""Reading parsed Handlebars: the node walk, the input names a template reads, syntax-error lines."""

from __future__ import annotations

import pytest

from dotprompt.engines.handlebars.syntax import line_of, syntax_error_line, template_variables, walk
from dotprompt.engines.handlebars.upstream import compile_template
from dotprompt.errors import PromptFileError

SAMPLE = ('{{a.b}} {{#each items}}{{x}}{{/each}}{{#with w}}{{y}}{{/with}}{{#if c}}{{d}}{{else}}{{e}}{{/if}}'
          '{{json f indent=g}}{{this}} {{true}} {{role "s"}}{{> part h=i}}')


def test_walk_reaches_block_bodies_and_else_branches():
    kinds = [type(node).__name__ for node in walk(compile_template(SAMPLE))]
    assert kinds == ["Mustache", "Text", "Block", "Mustache", "Block", "Mustache", "Block", "Mustache", "Mustache",
                     "Mustache", "Mustache", "Text", "Mustache", "Text", "Mustache", "Partial"]


def test_template_variables_are_top_level_input_names_only():
    # Not counted: names inside #each/#with (relative to the item), helpers, literals, `this`.
    assert template_variables(compile_template(SAMPLE)) == {"a", "c", "d", "e", "f", "g", "items", "w"}


@pytest.mark.parametrize(("source", "line"), [("a\n{{#if x}}\nb\n", 2), ("a\nb\n{{/each}}", 3),
                                              ("a\n{{#if x}}\n{{/each}}", 3), ("a\n\nb {{name", 3)])
def test_syntax_error_line_of_each_kind_of_error(source, line):
    with pytest.raises(ValueError) as caught:
        compile_template(source)
    assert syntax_error_line(source, str(caught.value)) == line


def test_line_of_first_match_else_one():
    assert line_of("a\nb {{> x}}\n{{> y}}", r"\{\{>") == 2
    assert line_of("a\nb", "nowhere") == 1


@pytest.mark.parametrize(("body", "line"), [("a\n{{#if x}}\nb\n", 5), ("a\nb\n{{/each}}", 6), ("a\n{{#if x}}\n{{/each}}", 6),
                                            ("a\n\nb {{name", 6)])
def test_syntax_error_has_file_and_line(folder, body, line):
    folder.write("p.prompt", "---\nmodel: m\n---\n" + body)
    with pytest.raises(PromptFileError) as caught:
        folder.library(engine="handlebars").load("p")
    assert caught.value.path.endswith("p.prompt") and caught.value.line == line, caught.value
