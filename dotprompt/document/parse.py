"""A `.prompt` source -> PromptSource: frontmatter split, known keys checked, `ext`, `raw`.

Only parsing happens here; schemas and templates are compiled elsewhere. Line numbers
always count from the first line of the file, frontmatter included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from .._util.suggest import did_you_mean, near_miss
from ..errors import PromptFileError
from ..settings import valid_max_turns

__all__ = [
    "FRONTMATTER_PATTERN",
    "INPUT_KEYS",
    "KNOWN_KEYS",
    "OUTPUT_KEYS",
    "TOOL_CHOICES",
    "USE_HINT",
    "Problems",
    "PromptSource",
    "compose_yaml",
    "did_you_mean",
    "is_blank",
    "load_yaml_safely",
    "parse_source",
    "read_keys",
    "report_to",
    "unopened_frontmatter",
    "use_arguments",
    "yaml_child",
    "yaml_entry",
    "yaml_key_node",
    "yaml_problem",
]

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
    "maxToolCalls": (int,),
    "toolChoice": (str,),
    "returnToolRequests": (bool,),
    "metadata": (dict,),
    "use": (list,),
}
INPUT_KEYS = ("schema", "default")
OUTPUT_KEYS = ("format", "schema", "constrained", "instructions", "grounding")
GROUNDING_MODES = ("off", "report", "require")  # output.grounding; see dotprompt/grounding
TOOL_CHOICES = ("auto", "required", "none")
Problems = list[PromptFileError]  # every problem found in a file, for `dotprompt check`

# libyaml's loader when present: 5-10x faster, same results for the safe subset.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Aliases may repeat at most this many nodes in total: ordinary reuse (a shared config block) stays
# far below, while a "billion laughs" document would make every later json.dumps/copy explode.
MAX_ALIAS_EXPANSION = 10_000
_NOT_JSON_TAGS = {"tag:yaml.org,2002:set": "a set (!!set)", "tag:yaml.org,2002:binary": "binary data (!!binary)",
                  "tag:yaml.org,2002:omap": "an ordered map (!!omap)", "tag:yaml.org,2002:pairs": "a list of pairs (!!pairs)"}
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _DuplicateKeyError(yaml.constructor.ConstructorError):
    """A mapping names the same key twice: both marks are kept so the message can give both lines."""

    context_mark: yaml.Mark  # always given where it is raised (the base class allows None)
    problem_mark: yaml.Mark


class _NotJsonError(yaml.constructor.ConstructorError):
    """A value JSON cannot hold (NaN, a set, binary data...)."""

    problem_mark: yaml.Mark  # always given where it is raised (the base class allows None)


_RESOLVED: dict[tuple[Any, str, Any], str] = {}  # (node kind, scalar text, implicit flags) -> tag
_RESOLVED_MAX = 4096
_RESOLVED_MAX_CHARS = 64


class _FrontmatterLoader(_LOADER):
    """The safe loader, refusing what JSON cannot hold and keys written twice.

    Every value a prompt file yields must survive `render --json` and reach a provider unchanged, so
    anything else is refused here, where the YAML marks still say which line it came from.
    """

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        # PyYAML resolves every scalar in Python, trying its regular expressions one by one; the same
        # few words (`string`, `integer`, key names) come back in every file. The answer depends on
        # nothing else while no path resolver is registered (none is, by default).
        if self.yaml_path_resolvers or not isinstance(value, str) or len(value) > _RESOLVED_MAX_CHARS:
            return super().resolve(kind, value, implicit)
        key = (kind, value, implicit)
        tag = _RESOLVED.get(key)
        if tag is None:
            if len(_RESOLVED) >= _RESOLVED_MAX:
                _RESOLVED.clear()
            tag = _RESOLVED[key] = super().resolve(kind, value, implicit)
        return tag

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        _check_duplicate_keys(node)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_float(self, node: Any) -> float:
        value = super().construct_yaml_float(node)
        if value != value or value in (float("inf"), float("-inf")):
            raise _NotJsonError(None, None, f"{node.value!r} is not a finite number (JSON has no NaN or infinity)",
                                node.start_mark)
        return value

    def construct_yaml_timestamp_text(self, node: Any) -> str:
        # Users write `released: 2024-01-01` meaning the text; a datetime object is not JSON.
        return str(node.value)

    def refuse_not_json(self, node: Any) -> Any:
        raise _NotJsonError(None, None, f"{_NOT_JSON_TAGS[node.tag]} cannot be written as JSON", node.start_mark)


_FrontmatterLoader.add_constructor("tag:yaml.org,2002:float", _FrontmatterLoader.construct_yaml_float)
_FrontmatterLoader.add_constructor("tag:yaml.org,2002:timestamp", _FrontmatterLoader.construct_yaml_timestamp_text)
for _tag in _NOT_JSON_TAGS:
    _FrontmatterLoader.add_constructor(_tag, _FrontmatterLoader.refuse_not_json)


def _check_duplicate_keys(node: Any) -> None:
    seen: dict[tuple[str, Any], Any] = {}
    for key_node, _ in node.value:
        if key_node.tag == _MERGE_TAG or not isinstance(key_node, yaml.ScalarNode):
            continue  # `<<: *base` entries may be overridden: that is what merging is for
        key = (key_node.tag, key_node.value)
        if key in seen:
            raise _DuplicateKeyError("while reading a mapping", seen[key].start_mark,
                                     f"duplicate key {key_node.value!r}", key_node.start_mark)
        seen[key] = key_node


# Errors YAML notices only where something opened earlier should have ended: the cause is where it opened.
_OPENED_AT_CONTEXT = {
    "while parsing a flow sequence": "the `[` opened here is never closed",
    "while parsing a flow mapping": "the `{` opened here is never closed",
    "while scanning a quoted scalar": "the quote opened here is never closed",
    "while scanning a simple key": "this line is not `key: value` (no `:` after it)",
}


def yaml_problem(exc: yaml.MarkedYAMLError, first_line: int = 1) -> tuple[str, Any]:
    """(what is wrong, the mark of its cause) for a YAML error.

    An unclosed `[`, `{` or quote is only noticed where the text ends or the next key starts; the
    line to fix is where it opened (the context mark), so that is the one reported. `first_line` is
    the file line of the text's first line (for the line named in the message)."""
    problem = exc.problem or exc.context or "invalid YAML"
    opened = _OPENED_AT_CONTEXT.get(exc.context or "")
    context, found = exc.context_mark, exc.problem_mark
    if opened and context is not None and (found is None or found.line > context.line):
        noticed = f" on line {first_line + found.line}" if found is not None else ""
        return f"{opened} (YAML: {problem}{noticed})", context
    return problem, found or context


def compose_yaml(text: str) -> Any:
    """The YAML node tree (with line marks; aliases are references, never expanded)."""
    return yaml.compose(text, Loader=_LOADER)


def load_yaml_safely(text: str) -> Any:
    """`yaml.safe_load`, refusing alias bombs, recursive aliases, duplicate keys and non-JSON values.

    Raises yaml.MarkedYAMLError subclasses (with marks) for the caller to locate.
    """
    loader = _FrontmatterLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_aliases(node, text)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _check_depth(node: Any) -> None:
    """Recurse through the nodes as `_check_aliases` does, two frames a level: a frontmatter nested too
    deeply for the code that reads it later (~500 levels) fails here, with RecursionError, as there."""
    if isinstance(node, yaml.MappingNode):
        _check_depth_of(child for pair in node.value for child in pair)
    elif isinstance(node, yaml.SequenceNode):
        _check_depth_of(node.value)


def _check_depth_of(children: Any) -> None:
    for child in children:
        _check_depth(child)


def _check_aliases(root: Any, text: str) -> None:
    """Refuse a node graph whose aliases loop or would expand past MAX_ALIAS_EXPANSION nodes."""
    if "*" not in text:  # no alias, so no node is shared: nothing can expand or loop
        _check_depth(root)
        return
    sizes: dict[int, int] = {}
    visiting: set[int] = set()
    distinct = 0

    def size(node: Any) -> int:
        nonlocal distinct
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in visiting:
            raise yaml.composer.ComposerError(None, None, "an alias refers to the node that contains it (a loop)",
                                              node.start_mark)
        visiting.add(key)
        distinct += 1
        children = node.value if isinstance(node, yaml.SequenceNode) else (
            [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else [])
        total = 1 + sum(size(child) for child in children)
        visiting.discard(key)
        sizes[key] = total
        if total - distinct > MAX_ALIAS_EXPANSION:
            raise yaml.composer.ComposerError(
                None, None, f"aliases expand to more than {MAX_ALIAS_EXPANSION} extra values (an alias bomb?)",
                node.start_mark)
        return total

    size(root)
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
    ignored_keys: list[tuple[str, str]] = field(default_factory=list)  # (section, key) under input/output: ignored
    body_line: int = 1  # file line of the template's first line
    yaml_text: str = ""
    yaml_line: int = 0  # file line of the first YAML line (0: no frontmatter)

    def locate(self, *keys: str | int) -> tuple[int | None, int | None]:
        """File line and column of a frontmatter key path, e.g. ("output", "schema", "name")."""
        if not self.yaml_text:
            return None, None
        node = compose_yaml(self.yaml_text)
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

    def locate_field(self, section: str, name: str) -> tuple[int | None, int | None]:
        """File line and column of field `name` of `section`.schema, however it is written: Picoschema
        (`name`, `name?`, `name(type, description)`) or JSON Schema (`properties: {name: ...}`)."""
        schema = _child_node(_child_node(compose_yaml(self.yaml_text), section), "schema") if self.yaml_text else None
        if isinstance(schema, yaml.MappingNode):
            properties = _child_node(schema, "properties")
            fields = properties if isinstance(properties, yaml.MappingNode) else schema
            for key_node, _ in fields.value:
                if isinstance(key_node, yaml.ScalarNode) and _field_name(str(key_node.value)) == name:
                    return self.yaml_line + key_node.start_mark.line, key_node.start_mark.column + 1
        return self.locate(section, "schema")

    def error(self, message: str, *keys: str | int, hint: str | None = None) -> PromptFileError:
        line, column = self.locate(*keys)
        return PromptFileError(message, path=self.path, line=line, column=column, hint=hint)


def is_blank(src: PromptSource) -> bool:
    """The whole file is empty or whitespace: no frontmatter, no template (it renders no messages)."""
    return src.yaml_line == 0 and not src.template.strip()


_KEY_LINE = re.compile(r"[A-Za-z_][\w.]*[ \t]*:(?:[ \t]|$)")
_CLOSING = re.compile(r"^---[ \t]*$", re.M)


def unopened_frontmatter(src: PromptSource) -> list[str]:
    """Frontmatter keys written before a `---` line in a file with no opening `---` (read as prompt text).

    Empty unless the text before the first `---` line is a YAML mapping holding a known key (`model:`)."""
    if src.yaml_line or not _KEY_LINE.match(src.template.lstrip("\ufeff")):
        return []
    closing = _CLOSING.search(src.template.replace("\r\n", "\n").replace("\r", "\n"))
    if closing is None or closing.start() > 64 * 1024:
        return []
    try:
        head = load_yaml_safely(src.template[: closing.start()])
    except (yaml.YAMLError, RecursionError):
        return []
    return [str(key) for key in head if key in KNOWN_KEYS] if isinstance(head, dict) else []


def _field_name(key: str) -> str:
    """The field a Picoschema key names: `name?(string, text)` -> `name`."""
    return key.split("(")[0].strip().rstrip("?")


def yaml_entry(node: Any, key: str) -> tuple[Any, Any]:
    """(key node, value node) of `key` in a composed YAML mapping; the node itself twice when absent,
    so an error about a missing key still points at the mapping."""
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if key_node.value == key:
                return key_node, value_node
    return node, node


def yaml_child(node: Any, key: str) -> Any:
    return yaml_entry(node, key)[1]


def yaml_key_node(node: Any, key: str) -> Any:
    return yaml_entry(node, key)[0]


def _child_node(node: Any, key: str | int) -> Any:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if key_node.value == key:
                value_node._key_mark = key_node.start_mark
                return value_node
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
        return node.value[key]
    return None


def parse_source(source: str, path: str | None = None, problems: Problems | None = None) -> PromptSource:
    """Split frontmatter from body and check the known keys' shapes.

    A problem with the keys is raised, or with a `problems` list added to it (see `read_keys`). YAML
    that does not parse is always raised: nothing after it can be read."""
    if not source.strip():
        # As dotpromptz: an empty file is a prompt of no messages (`dotprompt check` warns, `is_blank`).
        return PromptSource(path=path, template="")
    if source.startswith("\ufeff"):
        source = source[1:]  # a UTF-8 byte order mark (Windows editors) is not part of the text
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
    read_keys(src, problems)
    return src


def _load_yaml(text: str, path: str | None, first_line: int) -> dict[str, Any]:
    try:
        data = load_yaml_safely(text) if text.strip() else None
    except _DuplicateKeyError as exc:
        first = first_line + exc.context_mark.line
        mark = exc.problem_mark
        raise PromptFileError(f"{exc.problem} in frontmatter (first written on line {first})", path=path,
                              line=first_line + mark.line, column=mark.column + 1,
                              hint="keep one of the two; YAML would silently use the last") from None
    except _NotJsonError as exc:
        mark = exc.problem_mark
        written = text.splitlines()[mark.line].strip()
        raise PromptFileError(f"`{written}`: {exc.problem}", path=path, line=first_line + mark.line,
                              column=mark.column + 1, hint="every frontmatter value must be JSON: "
                              "a string, number, true/false, null, list or mapping") from None
    except yaml.MarkedYAMLError as exc:
        problem, mark = yaml_problem(exc, first_line)
        line = first_line + mark.line if mark else first_line
        column = mark.column + 1 if mark else None
        raise PromptFileError(f"invalid YAML in frontmatter: {problem}", path=path, line=line, column=column,
                              hint="check indentation and quote values containing ':' or '#'") from None
    except RecursionError:
        raise PromptFileError("frontmatter is nested too deeply", path=path, line=first_line) from None
    except yaml.YAMLError as exc:
        raise PromptFileError(f"invalid YAML in frontmatter: {exc}", path=path, line=first_line) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise PromptFileError(f"frontmatter must be a mapping of keys, got {type(data).__name__}",
                              path=path, line=first_line, hint="write `key: value` lines between the --- lines")
    return data


def report_to(problems: Problems | None) -> Any:
    """A function taking a problem: raises it when `problems` is None, else adds it to the list.

    Loading stops at the first problem of a file; `dotprompt check` passes a list to hear of them all."""

    def report(problem: PromptFileError) -> None:
        if problems is None:
            raise problem
        problems.append(problem)

    return report


def read_keys(src: PromptSource, problems: Problems | None = None) -> None:
    """Sort the frontmatter into known keys, extensions and unknown keys, checking the known ones.

    With a `problems` list every problem is added to it (a value in error is left out of the
    metadata) instead of the first being raised."""
    report = report_to(problems)
    for key, value in src.raw.items():
        key = str(key)
        if key in KNOWN_KEYS:
            problem = _type_problem(src, key, value)
            if problem is not None:
                report(problem)
                continue
            src.metadata[key] = value
        elif "." in key:
            namespace, _, leaf = key.rpartition(".")
            src.ext.setdefault(namespace, {})[leaf] = value
        else:
            src.unknown_keys.append(key)
    _check_nested(src, report)


def _type_problem(src: PromptSource, key: str, value: Any) -> PromptFileError | None:
    expected = KNOWN_KEYS[key]
    ok = isinstance(value, expected) and not (key in ("maxTurns", "maxToolCalls") and isinstance(value, bool))
    if ok:
        return None
    names = " or ".join(_yaml_type_name(t) for t in expected)
    return src.error(f"`{key}` must be {names}, got {_yaml_type_name(type(value))}", key)


def _check_nested(src: PromptSource, report: Any) -> None:
    meta = src.metadata
    for section, allowed in (("input", INPUT_KEYS), ("output", OUTPUT_KEYS)):
        unknown = [key for key in meta.get(section, {}) if key not in allowed]
        for key in unknown:
            if near_miss(str(key), allowed):  # `output.shema`: the schema would be lost
                report(src.error(f"unknown key `{section}.{key}`", section, key, hint=did_you_mean(str(key), allowed)))
            else:  # e.g. a schema written straight under `output:`: Genkit ignores it, so do we (check warns)
                src.ignored_keys.append((section, str(key)))
        if unknown:
            meta[section] = {k: v for k, v in meta[section].items() if k in allowed}
    grounding = meta.get("output", {}).get("grounding")
    if grounding is False:  # YAML reads a bare `off` as false
        grounding = "off"
        meta["output"] = {**meta["output"], "grounding": grounding}
    if grounding is not None and grounding not in GROUNDING_MODES:
        report(src.error(f"`output.grounding` must be one of {', '.join(GROUNDING_MODES)}", "output", "grounding",
                         hint=did_you_mean(str(grounding), GROUNDING_MODES)))
        meta["output"] = {k: v for k, v in meta["output"].items() if k != "grounding"}
    default = meta.get("input", {}).get("default")
    if default is not None and not isinstance(default, dict):
        report(src.error("`input.default` must be a mapping of input field values", "input", "default"))
        meta["input"] = {k: v for k, v in meta["input"].items() if k != "default"}
    for key in ("maxTurns", "maxToolCalls"):
        if key in meta and not valid_max_turns(meta[key]):
            report(src.error(f"`{key}` must be at least 1", key))
            del meta[key]
    if "toolChoice" in meta and meta["toolChoice"] not in TOOL_CHOICES:
        report(src.error(f"`toolChoice` must be one of {', '.join(TOOL_CHOICES)}", "toolChoice",
                         hint=did_you_mean(meta["toolChoice"], TOOL_CHOICES)))
        del meta["toolChoice"]
    use_problems = _genkit_use_entries(src)
    use_problems += [p for index, entry in enumerate(meta.get("use", [])) for p in _use_problems(src, index, entry)]
    for problem in use_problems:
        report(problem)
    if use_problems:
        del meta["use"]
    bad_tools = [index for index, name in enumerate(meta.get("tools", [])) if not isinstance(name, str)]
    for index in bad_tools:
        report(src.error("each entry of `tools` must be a tool name", "tools", index))
    if bad_tools:
        meta["tools"] = [name for name in meta["tools"] if isinstance(name, str)]


USE_HINT = ("write a middleware name, `{name: {argument: value}}` with keyword arguments, or Genkit's "
            "`{name: name, config: {argument: value}}`")


def _genkit_use_entries(src: PromptSource) -> list[PromptFileError]:
    """Genkit writes a `use:` entry as `{name: retry, config: {...}}`: read as `{retry: {...}}` (or `retry`).

    Told apart from the `{name: {arguments}}` shape by its string `name` and no keys but name and config."""
    entries = src.metadata.get("use")
    if not isinstance(entries, list):
        return []
    entries = src.metadata["use"] = list(entries)  # a copy: `raw` keeps the entries as written
    problems = []
    for index, entry in enumerate(entries):
        if not (isinstance(entry, dict) and isinstance(entry.get("name"), str) and set(entry) <= {"name", "config"}):
            continue
        name, config = entry["name"], entry.get("config")
        if config is not None and not isinstance(config, dict):
            problems.append(src.error(f"`config` of `use` entry {name!r} must be a mapping of keyword to value",
                                      "use", index, "config", hint=USE_HINT))
            continue
        entries[index] = {name: config} if config else name
    return problems


def _use_problems(src: PromptSource, index: int, entry: Any) -> list[PromptFileError]:
    """A `use:` entry is a name or a mapping {name: {keyword: value}}; built-ins' arguments must bind."""
    if isinstance(entry, str):
        return []
    if not isinstance(entry, dict):
        return [src.error("each entry of `use` must be a middleware name or a mapping of names to arguments",
                          "use", index, hint=USE_HINT)]
    return [src.error(f"`use` entry {name!r}: the arguments must be a mapping of keyword to value",
                      "use", index, name, hint=USE_HINT)
            for name, arguments in entry.items()
            if arguments is not None and not (isinstance(arguments, dict) and all(isinstance(k, str) for k in arguments))]


def use_arguments(src: PromptSource) -> list[tuple[int, str, dict[str, Any]]]:
    """(index, middleware name, keyword arguments) of every `use:` entry written as a mapping."""
    return [(index, str(name), arguments or {}) for index, entry in enumerate(src.metadata.get("use", []))
            if isinstance(entry, dict) for name, arguments in entry.items()]


def _yaml_type_name(kind: type) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false",
            dict: "a mapping", list: "a list"}.get(kind, kind.__name__)
