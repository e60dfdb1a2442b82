"""A Genkit-style prompt folder, as it is: checked with no flags, rendered side by side with dotpromptz.

The folder below is our own, written to use every construct the prompt folders of Genkit's
samples and tests use (roles with and without spaces, history, media with and without a content
type, if/else/unless/each with @last, a partial with a hash argument, @state, a helper and schemas
defined in code, defaults, a schema written straight under `output:`, plain `{{name}}` files that
take the folder's engine, frontmatter without a body).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from dotprompt import PromptLibrary
from dotprompt.lint.check import check_library
from tests.cli_process import run

FOLDER = {
    "_tone.prompt": '{{ role "system" }}\nSpeak like a {{#if mood}}{{mood}}{{else}}sailor{{/if}}.\n{{role "user"}}\n',
    "tale.prompt": ("---\nmodel: googleai/gemini-2.5-flash\ninput:\n  schema:\n    topic: string\n    mood?: string\n"
                    "output:\n  format: text\n---\n{{>tone mood=mood}}\n\nTell a tale about {{topic}}.\n"),
    "chef.prompt": ("---\nmodel: googleai/gemini-2.5-flash\ninput:\n  schema: DishRequest\noutput:\n  format: json\n"
                    "  schema: Dish\n---\n{{role \"system\"}}\nYou cook fast.\n\n{{role \"user\"}}\n"
                    "Make {{cuisine}} {{dish}} for {{servings}}.\n{{#if avoid}}\n"
                    "Avoid: {{#each avoid}}{{this}}{{#unless @last}}, {{/unless}}{{/each}}.\n{{/if}}\n"),
    "pantry.prompt": ("---\nmodel: m\ninput:\n  schema:\n    food: string\n    items?(array): string\n---\n"
                      "Cook {{food}}.\n{{#if items}}\nUse:\n{{bullets items}}\n{{/if}}"),
    "photo.prompt": "---\nmodel: m\ninput:\n  schema:\n    photoUrl: string\n---\nWhat is this?\n\n{{media url=photoUrl}}",
    "clip.prompt": ("---\nmodel: m\ninput:\n  schema:\n    clipUrl: string\n    kind: string\noutput:\n  gist: string\n"
                    "---\n{{ role \"system\" }}\n\nYou summarise clips.\n\n{{ role \"user\" }}\n\nSummarise:\n"
                    "{{media url=clipUrl contentType=kind}}"),
    "chat.prompt": ('{{role "system"}}\nYou are kind.\n{{history}}\n{{role "user"}}\nAnd now?\n{{role "model"}}\nWell.'),
    "agent.prompt": '---\ndescription: uses state\ntools:\n  - lookup_order\n---\n{{ role "system" }} I am {{ @state.name }}.',
    "greet.prompt": ("---\nmodel: m\ninput:\n  schema:\n    name: string\n    voice?: string\n  default:\n"
                     "    voice: pirate\n    extra: unused\n---\n\nSay hello to {{name}} as a {{voice}}."),
    "plain.prompt": "---\nmodel: m\ninput:\n  schema:\n    question: string\n---\nQuestion: {{question}}\nAnswer:",
    "settings.prompt": "---\nmodel: m\nconfig:\n  temperature: 1.2\n  stopSequences: [\"<end>\"]\n---",
}
CASES: list[tuple[str, dict[str, Any], dict[str, Any], list[dict[str, Any]]]] = [
    ("tale", {"topic": "a lighthouse", "mood": "poet"}, {}, []),
    ("tale", {"topic": "a lighthouse"}, {}, []),
    ("chef", {"cuisine": "Thai", "dish": "soup", "servings": 2, "avoid": ["nuts", "fish"]}, {}, []),
    ("chef", {"cuisine": "Thai", "dish": "soup", "servings": 2}, {}, []),
    ("pantry", {"food": "stew", "items": ["leek", "salt"]}, {}, []),
    ("photo", {"photoUrl": "https://example.com/cat.png"}, {}, []),
    ("clip", {"clipUrl": "gs://bucket/clip.mp4", "kind": "video/mp4"}, {}, []),
    ("chat", {}, {}, [{"role": "user", "content": [{"text": "hi"}]}, {"role": "model", "content": [{"text": "hello"}]}]),
    ("agent", {}, {"state": {"name": "Ada"}}, []),
    ("greet", {"name": "Sam"}, {}, []),
    ("greet", {"name": "Sam", "voice": "robot"}, {}, []),
    ("plain", {"question": "Why is the sky blue?"}, {}, []),
]
DISH_REQUEST = {"type": "object", "properties": {"cuisine": {"type": "string"}, "dish": {"type": "string"},
                                                 "servings": {"type": "integer"},
                                                 "avoid": {"type": "array", "items": {"type": "string"}}},
                "required": ["cuisine", "dish", "servings"]}
DISH = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}


def bullets(items: list[str]) -> str:
    return "\n".join(f"- {item}" for item in items)


def _write(root: Path) -> Path:
    root.mkdir(exist_ok=True)
    for name, text in FOLDER.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def _library(root: Path) -> PromptLibrary:
    lib = PromptLibrary(root)
    lib.define_schema("DishRequest", DISH_REQUEST)
    lib.define_schema("Dish", DISH)
    lib.define_helper("bullets", bullets)
    return lib


def test_the_folder_checks_with_no_flags_warnings_only(tmp_path):
    lib = PromptLibrary(_write(tmp_path / "prompts"))
    found = check_library(lib, jobs=1)
    assert [d for d in found if d.level == "error"] == []
    assert sorted((Path(d.path).name, d.message.split(" (")[0].split(":")[0]) for d in found) == [
        ("agent.prompt", "no registered module defines tool `lookup_order`"),
        ("chef.prompt", "no registered module defines schema `DishRequest`"),
        ("chef.prompt", "no registered module defines schema `Dish`"),
        ("clip.prompt", "unknown key `output.gist` is ignored, as Genkit ignores it"),
        ("greet.prompt", "input.default `extra` is not declared in input.schema"),
        ("pantry.prompt", "no registered module defines helper `bullets`"),
    ]
    engines = {name: lib.load(name).compiled.engine.engine for name in ("tale", "plain", "greet", "settings", "chat")}
    # plain `{{name}}` files (and one with no body) take the engine of their folder: Handlebars here (issue 29)
    assert engines == {"tale": "handlebars", "plain": "handlebars", "greet": "handlebars", "settings": "handlebars",
                       "chat": "handlebars"}


@pytest.mark.slow  # the command line as a child process
def test_check_from_the_command_line_exits_0(tmp_path, dotprompt_cmd, cli_env):
    _write(tmp_path / "prompts")
    done = run(dotprompt_cmd, "check", "prompts", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stdout
    assert "checked 10 prompts: 0 error(s), 6 warning(s)" in done.stderr


def _theirs(dotpromptz: Any, root: Path, name: str, data: dict, context: dict, history: list) -> list[dict]:
    partials = {p.name[1:-7]: p.read_text() for p in root.glob("_*.prompt")}
    helpers = {"bullets": lambda params, options=None: bullets(params[0])}
    dp = dotpromptz.Dotprompt(partials=partials, helpers=helpers, schemas={"DishRequest": DISH_REQUEST, "Dish": DISH})
    argument = dotpromptz.DataArgument(input=data, context=context,
                                       messages=[dotpromptz.Message.model_validate(m) for m in history])
    rendered = asyncio.run(dp.render((root / f"{name}.prompt").read_text(), argument))
    return [m.model_dump(exclude_none=True, by_alias=True, mode="json") for m in rendered.messages]


@pytest.mark.parametrize(("name", "data", "context", "history"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_the_same_messages_as_dotpromptz(tmp_path, name, data, context, history):
    dotpromptz = pytest.importorskip("dotpromptz")
    root = _write(tmp_path / "prompts")
    mine = _library(root).load(name).render(data, context=context, history=history).to_dict()["messages"]
    assert mine == _theirs(dotpromptz, root, name, data, context, history)


def test_a_media_url_with_a_space_stays_whole_where_dotpromptz_splits_it(tmp_path):
    # A difference from Genkit, kept on purpose: dotpromptz splits its media marker on spaces.
    root = _write(tmp_path / "prompts")
    url = "https://example.com/my cat.png"
    mine = _library(root).load("photo").render({"photoUrl": url}).to_dict()["messages"]
    assert mine[0]["content"][1] == {"media": {"url": url}}


def test_defaults_outside_the_schema_render_and_the_callers_own_extra_keys_still_fail(tmp_path):
    from dotprompt.errors import InputValidationError

    prompt = _library(_write(tmp_path / "prompts")).load("greet")
    assert prompt.render({"name": "Sam"}).messages[0].content[0].text == "Say hello to Sam as a pirate."
    with pytest.raises(InputValidationError, match="Additional properties"):
        prompt.render({"name": "Sam", "age": 3})


def test_a_typo_under_output_is_still_an_error(tmp_path):
    from dotprompt.errors import PromptFileError

    with pytest.raises(PromptFileError, match="did you mean `schema`"):
        PromptLibrary(None).from_source("---\noutput:\n  shema:\n    a: string\n---\nx")
