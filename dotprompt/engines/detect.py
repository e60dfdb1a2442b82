"""`engine: auto`: which engine renders a file that names none, read from its template's syntax.

One job: a cheap, single pass over the template (no parse, no try-one-then-the-other). The rule:

- Handlebars when a `{{ ... }}` tag holds syntax only Handlebars reads: a block or its end
  (`{{#if x}}`, `{{/each}}`, `{{^x}}`), a partial (`{{> style}}`), a comment (`{{! }}`), a data
  variable (`{{@key}}`, `{{@state.x}}`), unescaped output (`{{&x}}`, `{{{x}}}`), whitespace control
  (`{{~x~}}`), a parent path (`{{../x}}`), a helper called with arguments (`{{role "system"}}`,
  `{{media url=photoUrl}}`, `{{list items}}`), or the bare `{{history}}` helper.
- jinja2 otherwise, and also when the template has jinja2 tags (`{% ... %}`, `{# ... #}`) besides:
  a mixed file is most likely jinja2 with a slip, and the jinja2 error says how to write it.

Every construct in the first list is one jinja2 cannot compile (or, for `{{history}}`, cannot
render), so a template that works as jinja2 today holds none of them outside its `{% raw %}`
blocks, comments and string literals, which the scan skips: such a file never changes engine.

A template of plain `{{name}}` / `{{a.b}}` tags only (or none) is read alike by both engines, except
how a value prints (`true` / `True`, `a,b` / `['a', 'b']`, `9` / `9.0`): for such a file `auto`
takes the engine its folder and project write in (`project.py`, passed in as `project`), and stays
jinja2 when nothing there decides.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..settings import TEMPLATE_ENGINES as ENGINE_SETTINGS

__all__ = ["ENGINE_KEY", "ENGINE_SETTINGS", "EngineChoice", "ProjectHint", "choose_engine", "declared_engine",
           "detect_engine", "is_ambiguous", "plain_tags", "scan", "syntax_engine"]

ENGINE_KEY = "dotprompt"  # frontmatter `dotprompt.engine: handlebars` lands in ext["dotprompt"]["engine"]

Source = Literal["file", "library", "detected"]

_OPENER = re.compile(r"{{|{%|{#")
_RAW = re.compile(r"{%[-+]?\s*raw\s*[-+]?%}")
_END_RAW = re.compile(r"{%[-+]?\s*endraw\s*[-+]?%}")
# The inside of `{{ ... }}` (stripped) that only Handlebars reads.
_HANDLEBARS_TAG = re.compile(
    r"""^(?:[#/^>!@&~.]            # block, close, inverse, partial, comment, @data, unescaped, ~, ../path
          |history$               # the bare history helper (jinja2 cannot print a helper)
          |.*~$                   # whitespace control on the right: {{x~}}
          |(?!not\b)[A-Za-z_][\w.-]*\s+       # a helper name, then an argument jinja2 cannot follow it with:
           (?:["'@0-9]|(?!(?:is|in|if|else|and|or|not)\b)[A-Za-z_])
        )""", re.VERBOSE | re.DOTALL)


# The inside of a `{{ ... }}` both engines read alike: a name, or a dotted path of names and indexes.
_PLAIN_TAG = re.compile(r"[A-Za-z_]\w*(?:\.(?:[A-Za-z_]\w*|\d+))*")

# () -> (engine or None, why): the engine of a file's folder and project (engines/project.py), asked lazily.
ProjectHint = Callable[[], "tuple[str | None, str]"]


@dataclass(frozen=True)
class EngineChoice:
    """The engine a file renders with, and why (shown by `render --json` and `check -v`)."""

    engine: str
    source: Source  # file: `dotprompt.engine` in its frontmatter; library: an explicit setting; detected: auto
    reason: str
    guessed: bool = False  # either engine reads it alike and nothing around it decided: jinja2 by default

    def to_dict(self) -> dict[str, str]:
        return {"name": self.engine, "source": self.source, "reason": self.reason}


def declared_engine(ext: Mapping[str, Any]) -> str | None:
    """The engine a file asks for with `dotprompt.engine: ...`, if it names one."""
    block = ext.get(ENGINE_KEY)
    engine = block.get("engine") if isinstance(block, Mapping) else None
    return engine if isinstance(engine, str) and engine else None


def choose_engine(ext: Mapping[str, Any], template: str, setting: str, first_line: int = 1,
                  project: ProjectHint | None = None) -> EngineChoice:
    """The file's own `dotprompt.engine`, else the library's engine, else (`auto`) the template's syntax,
    and for a template either engine reads alike, the engine of its folder and project (`project`)."""
    declared = declared_engine(ext)
    if declared is not None:
        return EngineChoice(declared, "file", "`dotprompt.engine` in the frontmatter")
    if setting != "auto":
        return EngineChoice(setting, "library", f"the library's engine is {setting}")
    found = scan(template)  # once for both questions: it walks the whole template when no jinja2 tag is in it
    choice = detect_engine(template, first_line, found)
    if choice.engine != "jinja2" or syntax_engine(template, found) is not None:
        return choice
    engine, why = project() if project is not None else (None, "")
    if engine is None:
        return EngineChoice("jinja2", "detected", "no syntax only one engine reads, and nothing around it "
                                                  "decides: jinja2 by default", guessed=True)
    return EngineChoice(engine, "detected", f"no syntax only one engine reads; {why}")


def is_ambiguous(template: str) -> bool:
    """Both engines read the template alike but for how values print: plain `{{name}}` tags, or no tags."""
    return syntax_engine(template) is None


def plain_tags(template: str) -> list[tuple[str, str, int]]:
    """(tag as written, its path, offset) of each plain `{{name}}` / `{{a.b}}` tag of the template."""
    out = []
    position = 0
    while (start := template.find("{{", position)) >= 0:
        close = _close_of(template, start + 2)
        if close < 0:
            break
        path = template[start + 2:close].strip()
        if _PLAIN_TAG.fullmatch(path):
            out.append((template[start:close + 2], path, start))
        position = close + 2
    return out


Found = tuple[tuple[int, str] | None, tuple[int, str] | None]  # what `scan` finds


def syntax_engine(template: str, found: Found | None = None) -> str | None:
    """The engine the template's syntax alone decides: handlebars, jinja2, or None when both read it alike.
    `found`: the template's `scan`, when the caller has it."""
    handlebars, jinja = scan(template) if found is None else found
    if jinja is not None:
        return "jinja2"
    if handlebars is not None:
        return "handlebars"
    position = 0
    while (start := template.find("{{", position)) >= 0:
        close = _close_of(template, start + 2)
        if close < 0:
            return "jinja2"  # an unclosed tag: jinja2's error says where
        if template.startswith("{{{", start) or not _PLAIN_TAG.fullmatch(template[start + 2:close].strip()):
            return "jinja2"  # an expression (`x | upper`, `a + 1`, `f(x)`): only jinja2 reads it
        position = close + 2
    return None


def detect_engine(template: str, first_line: int = 1, found: Found | None = None) -> EngineChoice:
    handlebars, jinja = scan(template) if found is None else found
    if handlebars is not None and jinja is None:
        offset, tag = handlebars
        line = first_line + template.count("\n", 0, offset)
        return EngineChoice("handlebars", "detected", f"`{tag}` on line {line} is Handlebars syntax")
    if handlebars is not None and jinja is not None:
        line = first_line + template.count("\n", 0, jinja[0])
        return EngineChoice("jinja2", "detected", f"Handlebars syntax mixed with the jinja2 tag `{jinja[1]}` "
                                                  f"on line {line}: read as jinja2")
    return EngineChoice("jinja2", "detected", "no Handlebars-only syntax")


def scan(template: str) -> Found:
    """(offset, text) of the first Handlebars-only tag and of the first jinja2 tag, each or None."""
    handlebars = jinja = None
    position = 0
    while handlebars is None or jinja is None:
        opener = _OPENER.search(template, position)
        if opener is None:
            break
        start = opener.start()
        kind = opener.group()
        if kind == "{{":
            end, is_handlebars = _mustache(template, start)
            if is_handlebars and handlebars is None:
                handlebars = (start, _shown(template[start:end]))
        else:
            closed = _jinja_tag_end(template, start, kind)
            if closed is None:  # never closed: jinja2 would fail on it, so it is no sign of jinja2
                position = start + 2
                continue
            end = closed
            if jinja is None:
                jinja = (start, _shown(template[start:end]))
        position = end
    return handlebars, jinja


def _mustache(template: str, start: int) -> tuple[int, bool]:
    """(offset past the tag, whether it is Handlebars-only) for the `{{` at `start`."""
    if template.startswith("{{!--", start):
        close = template.find("--}}", start + 5)
        return (len(template) if close < 0 else close + 4), True
    if template.startswith("{{{", start):
        close = template.find("}}}", start + 3)
        inner = template[start + 3:close] if close >= 0 else ""
        # jinja2 reads `{{{...}}}` as a dict literal, which needs `key: value`: without a colon it cannot parse.
        return (start + 3 if close < 0 else close + 3), bool(inner.strip()) and ":" not in inner
    close = _close_of(template, start + 2)
    if close < 0:
        return start + 2, False
    return close + 2, _HANDLEBARS_TAG.match(template[start + 2:close].strip()) is not None


def _close_of(template: str, position: int) -> int:
    """The `}}` ending a tag that starts at `position`, stepping over string literals as jinja2's lexer does."""
    quote = None
    index = position
    while index < len(template) - 1:
        char = template[index]
        if quote is not None:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == "}" and template[index + 1] == "}":
            return index
        index += 1
    return -1


def _jinja_tag_end(template: str, start: int, kind: str) -> int | None:
    if kind == "{#":
        close = template.find("#}", start + 2)
        return None if close < 0 else close + 2
    raw = _RAW.match(template, start)
    if raw is not None:
        end_raw = _END_RAW.search(template, raw.end())
        return None if end_raw is None else end_raw.end()
    close = template.find("%}", start + 2)
    return None if close < 0 else close + 2


def _shown(tag: str) -> str:
    tag = " ".join(tag.split())
    return tag if len(tag) <= 40 else tag[:37] + "..."
