"""A `.prompt` source -> PromptSource: frontmatter split, known keys checked, `ext`, `raw`.

Only parsing happens here; schemas and templates are compiled elsewhere. Line numbers
always count from the first line of the file, frontmatter included.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from .errors import PromptFileError
from .settings import valid_max_turns

# Known frontmatter keys and the Python types their values must have.
KNOWN_KEYS: dict[str, tuple[type, ...]] = {
    "name": (str,),
    "variant": (str,),
    "version": (str, int, float),
    "description": (str,),
    "model": (str,),
    "config": (dict,),
    "input": (dict,),
    "output": (dict,),
    "tools": (list,),
    "toolDefs": (list,),
    "maxTurns": (int,),
    "toolChoice": (str,),
    "returnToolRequests": (bool,),
    "metadata": (dict,),
    "use": (list,),
}
INPUT_KEYS = ("schema", "default")
OUTPUT_KEYS = ("format", "schema", "constrained", "instructions")
TOOL_CHOICES = ("auto", "required", "none")

# libyaml's loader when present: 5-10x faster, same results for the safe subset.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
FRONTMATTER_PATTERN = re.compile(r"\A((?:(?:#[^\n]*|[ \t]*)\n)*)---[ \t]*\n(.*?\n)?---[ \t]*(?:\n|\Z)", re.S)


@dataclass
class PromptSource:
    """A parsed prompt file: metadata as written (camelCase keys), the template body and where things are."""

    path: str | None
    template: str
    raw: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    ext: dict[str, dict[str, Any]] = field(default_factory=dict)
    unknown_keys: list[str] = field(default_factory=list)
    body_line: int = 1  # file line of the template's first line
    yaml_text: str = ""
    yaml_line: int = 0  # file line of the first YAML line (0: no frontmatter)

    def locate(self, *keys: str | int) -> tuple[int | None, int | None]:
        """File line and column of a frontmatter key path, e.g. ("output", "schema", "name")."""
        if not self.yaml_text:
            return None, None
        node = yaml.compose(self.yaml_text, Loader=_LOADER)
        found = node
        for key in keys:
            child = _child_node(found, key)
            if child is None:
                break
            found = child
        if found is None:
            return self.yaml_line, 1
        mark = getattr(found, "_key_mark", None) or found.start_mark
        return self.yaml_line + mark.line, mark.column + 1

    def error(self, message: str, *keys: str | int, hint: str | None = None) -> PromptFileError:
        line, column = self.locate(*keys)
        return PromptFileError(message, path=self.path, line=line, column=column, hint=hint)


def _child_node(node: Any, key: str | int) -> Any:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if key_node.value == key:
                value_node._key_mark = key_node.start_mark
                return value_node
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
        return node.value[key]
    return None


def parse_source(source: str, path: str | None = None) -> PromptSource:
    """Split frontmatter from body and check the known keys' shapes."""
    if not source.strip():
        raise PromptFileError("prompt file is empty", path=path, line=1, hint="write a template, or delete the file")
    normalised = source.replace("\r\n", "\n").replace("\r", "\n")
    match = FRONTMATTER_PATTERN.match(normalised)
    if match is None:
        # Without frontmatter the whole source is the template, untouched.
        return PromptSource(path=path, template=source)
    leading, yaml_text = match.group(1), match.group(2) or ""
    yaml_line = leading.count("\n") + 2
    rest = normalised[match.end():]
    stripped_front = rest[: len(rest) - len(rest.lstrip())]
    body_line = yaml_line + yaml_text.count("\n") + 1 + stripped_front.count("\n")
    raw = _load_yaml(yaml_text, path, yaml_line)
    src = PromptSource(path=path, template=rest.strip(), raw=raw, body_line=body_line,
                       yaml_text=yaml_text, yaml_line=yaml_line)
    read_keys(src)
    return src


def _load_yaml(text: str, path: str | None, first_line: int) -> dict[str, Any]:
    try:
        data = yaml.load(text, Loader=_LOADER) if text.strip() else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = first_line + mark.line if mark else first_line
        column = mark.column + 1 if mark else None
        problem = exc.problem or exc.context or "invalid YAML"
        raise PromptFileError(f"invalid YAML in frontmatter: {problem}", path=path, line=line, column=column,
                              hint="check indentation and quote values containing ':' or '#'") from None
    except yaml.YAMLError as exc:
        raise PromptFileError(f"invalid YAML in frontmatter: {exc}", path=path, line=first_line) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise PromptFileError(f"frontmatter must be a mapping of keys, got {type(data).__name__}",
                              path=path, line=first_line, hint="write `key: value` lines between the --- lines")
    return data


def read_keys(src: PromptSource) -> None:
    for key, value in src.raw.items():
        key = str(key)
        if key in KNOWN_KEYS:
            _check_type(src, key, value)
            src.metadata[key] = value
        elif "." in key:
            namespace, _, leaf = key.rpartition(".")
            src.ext.setdefault(namespace, {})[leaf] = value
        else:
            src.unknown_keys.append(key)
    _check_nested(src)


def _check_type(src: PromptSource, key: str, value: Any) -> None:
    expected = KNOWN_KEYS[key]
    ok = isinstance(value, expected) and not (key == "maxTurns" and isinstance(value, bool))
    if not ok:
        names = " or ".join(_yaml_type_name(t) for t in expected)
        raise src.error(f"`{key}` must be {names}, got {_yaml_type_name(type(value))}", key)


def _check_nested(src: PromptSource) -> None:
    meta = src.metadata
    for section, allowed in (("input", INPUT_KEYS), ("output", OUTPUT_KEYS)):
        for key in meta.get(section, {}):
            if key not in allowed:
                raise src.error(f"unknown key `{section}.{key}`", section, key,
                                hint=did_you_mean(str(key), allowed) or f"known keys: {', '.join(allowed)}")
    default = meta.get("input", {}).get("default")
    if default is not None and not isinstance(default, dict):
        raise src.error("`input.default` must be a mapping of input field values", "input", "default")
    if "maxTurns" in meta and not valid_max_turns(meta["maxTurns"]):
        raise src.error("`maxTurns` must be at least 1", "maxTurns")
    if "toolChoice" in meta and meta["toolChoice"] not in TOOL_CHOICES:
        raise src.error(f"`toolChoice` must be one of {', '.join(TOOL_CHOICES)}", "toolChoice",
                        hint=did_you_mean(meta["toolChoice"], TOOL_CHOICES))
    for index, name in enumerate(meta.get("tools", [])):
        if not isinstance(name, str):
            raise src.error("each entry of `tools` must be a tool name", "tools", index)


def did_you_mean(word: str, choices: Any) -> str | None:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower().replace("_", ""): c for c in choices}
        hit = lowered.get(word.lower().replace("_", ""))
        close = [hit] if hit else []
    return f"did you mean `{close[0]}`?" if close else None


def _yaml_type_name(kind: type) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false",
            dict: "a mapping", list: "a list"}.get(kind, kind.__name__)
