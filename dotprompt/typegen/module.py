"""One Python module for a prompt folder: for each prompt and variant its input TypedDict, output model
and the model's partial twin, and one accessor per prompt (`extract()`, `extract("fast")`) typed
`Prompt[Input, Output, OutputPartial]`. Deterministic: the same files give the same bytes."""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DotpromptError, UsageError
from ..prompts.library import PromptLibrary
from ..prompts.loader import code_entries
from ..prompts.store import PromptInfo
from .emit import LINE, Emitter, Root, docstring
from .names import PromptNames, prompt_names
from .stale import HEADER, frontmatter_hash, source_key

__all__ = ["TypedPrompt", "generate_module", "typed_prompts"]


@dataclass(frozen=True)
class TypedPrompt:
    """What the module says of one prompt file."""

    info: PromptInfo
    names: PromptNames
    input_schema: Any
    input_defaults: frozenset[str]
    output_format: str | None
    output_schema: Any
    output_class: tuple[str, str] | None  # (module, class) of an output schema defined in code
    frontmatter: str  # its hash


def typed_prompts(lib: PromptLibrary, code_classes: Mapping[str, str] | None = None) -> list[TypedPrompt]:
    """Every prompt of the library, read for its types; a file that does not load is a UsageError naming it."""
    infos = lib.prompts()
    names = prompt_names([(i.name, i.variant, i.path) for i in infos])
    return [_typed(lib, info, names[(info.name, info.variant)], code_classes or {}) for info in infos]


def _typed(lib: PromptLibrary, info: PromptInfo, names: PromptNames, code_classes: Mapping[str, str]) -> TypedPrompt:
    try:
        source, meta = lib.schemas(info)
    except DotpromptError as exc:
        raise UsageError(f"{info.path}: cannot read its types: {str(exc)[:300]} (`dotprompt check` shows every "
                         "problem of the file)") from None
    written = source.raw.get("output")
    named = written.get("schema") if isinstance(written, Mapping) else None
    block_in = _block(meta, "input")
    block_out = _block(meta, "output")
    defaults = block_in.get("default")
    code_class = (code_classes[named], named) if isinstance(named, str) and named in code_classes else None
    return TypedPrompt(info, names, block_in.get("schema"), frozenset(defaults) if isinstance(defaults, Mapping)
                       else frozenset(), block_out.get("format"), block_out.get("schema"), code_class,
                       frontmatter_hash(source.yaml_text, parsed=True))


def _block(meta: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    found = meta.get(key)
    return found if isinstance(found, Mapping) else {}


def code_classes(settings: Mapping[str, Any], root: Path | None) -> dict[str, str]:
    """Class name -> importable module, for the classes `[tool.dotprompt] schemas` modules define (read
    with `ast`, not run): an output schema named after one is imported, not written again."""
    out: dict[str, str] = {}
    for setting, entry in code_entries(dict(settings), root):
        if setting != "schemas":
            continue
        base = root or Path.cwd()
        path = base / entry if entry.endswith(".py") else base / (entry.replace(".", "/") + ".py")
        dotted = entry.removesuffix(".py").replace("/", ".").replace("\\", ".") if entry.endswith(".py") else entry
        if not all(part.isidentifier() for part in dotted.split(".")):
            continue  # not importable by that name (a file name with a space or a dash): its schemas are written out instead
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue  # not beside pyproject.toml (installed) or broken: its schemas are written out instead
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                out.setdefault(node.name, dotted)
    return out


def generate_module(prompts: list[TypedPrompt], folder_label: str) -> str:
    """The module's text for `prompts` (from `typed_prompts`); `folder_label` names the folder in the header."""
    emitter = Emitter()
    imports: set[tuple[str, str]] = set()
    table: list[str] = []
    for prompt in prompts:
        table.append(_prompt_types(emitter, prompt, imports))
    accessors = _accessors(prompts, emitter)  # before the imports: they add what the accessors use
    return "\n".join([*_header(prompts, folder_label), *_imports(emitter, imports), *emitter.code(),
                      "", "", "_TYPES: dict[tuple[str, str | None], tuple[Any, Any]] = {", *table, "}",
                      *accessors, ""])


def _prompt_types(emitter: Emitter, prompt: TypedPrompt, imports: set[tuple[str, str]]) -> str:
    """Define the prompt's Input, Output, OutputPartial and Prompt names; its row of the runtime table."""
    prefix = prompt.names.prefix
    input_name, output_name, partial_name = (emitter.reserve(f"{prefix}{w}") for w in ("Input", "Output",
                                                                                         "OutputPartial"))
    _input(emitter, prompt, input_name)
    model = _output(emitter, prompt, output_name, partial_name, imports)
    prompt_alias = emitter.reserve(f"{prefix}Prompt")
    emitter.typing_names.add("TypeAlias")
    emitter.alias(prompt_alias, f"Prompt[{input_name}, {output_name}, {partial_name if model else 'Any'}]")
    key = f"({_string(prompt.info.name)}, {_string(prompt.info.variant) if prompt.info.variant else 'None'})"
    value = f"({output_name}, {partial_name})" if model else "(None, None)"
    if len(key) + len(value) + 7 <= LINE:
        return f"    {key}: {value},"
    return f"    {key}: (\n        {output_name},\n        {partial_name},\n    ),"


def _input(emitter: Emitter, prompt: TypedPrompt, name: str) -> None:
    schema = prompt.input_schema
    if isinstance(schema, Mapping) and schema.get("type", "object") == "object" and "properties" in schema:
        emitter.define(name, schema, "input", Root(schema, name), defaults=prompt.input_defaults)
    elif isinstance(schema, Mapping):
        emitter.alias(name, emitter.type_of(schema, name, "data", Root(schema, name)))
    else:  # no input schema: any variables
        emitter.typing_names.add("Any")
        emitter.alias(name, "dict[str, Any]")


def _output(emitter: Emitter, prompt: TypedPrompt, name: str, partial: str, imports: set[tuple[str, str]]) -> bool:
    """Define the output's names; True when it is a model (validated into at run time), False for JSON data."""
    schema, fmt = prompt.output_schema, prompt.output_format
    if _is_object(schema) and fmt in (None, "json"):
        if prompt.output_class is not None:
            module, cls = prompt.output_class
            imports.add((module, cls))
            emitter.alias(name, cls)
        else:
            emitter.define(name, schema, "output", Root(schema, name))
        emitter.define(partial, schema, "partial", Root(schema, name))
        return True
    if schema is None and fmt in (None, "text"):
        expression = "str"
    elif schema is None:
        expression = emitter.type_of(True, name, "data", Root(None, name))
    else:
        expression = emitter.type_of(schema, name, "data", Root(schema, name))
    emitter.alias(name, expression)
    emitter.typing_names.add("Any")
    emitter.alias(partial, "Any")
    return False


def _is_object(schema: Any) -> bool:
    return isinstance(schema, Mapping) and schema.get("type", "object") == "object" and \
        isinstance(schema.get("properties"), Mapping) and bool(schema["properties"])


def _header(prompts: list[TypedPrompt], folder_label: str) -> list[str]:
    lines = [f"{HEADER} from {folder_label}: do not edit, run it again.",
             "# The prompt files, each with a hash of its frontmatter:"]
    lines += [f"#   {source_key(Path(p.info.path).relative_to(_folder(p)).as_posix())} {p.frontmatter}" for p in prompts]
    return [*lines, "", '"""Typed prompts: each accessor gives `Prompt[Input, Output, OutputPartial]`."""']


def _folder(prompt: TypedPrompt) -> Path:
    depth = prompt.info.name.count("/") + 1  # billing/refund.prompt sits one folder below the prompt folder
    return Path(prompt.info.path).parents[depth - 1]


def _imports(emitter: Emitter, code: set[tuple[str, str]]) -> list[str]:
    lines = ["", "from os import PathLike", f"from typing import {', '.join(sorted(emitter.typing_names | {'Any'}))}", ""]
    lines.append("from dotprompt import Prompt, load_prompt")
    if emitter.pydantic_names:
        lines.append(f"from pydantic import {', '.join(sorted(emitter.pydantic_names))}")
    if code:  # the project's own modules: a block of their own, as isort and ruff sort first-party code
        lines += ["", *(f"from {module} import {cls}" for module, cls in sorted(code))]
    return lines


def _accessors(prompts: list[TypedPrompt], emitter: Emitter) -> list[str]:
    by_accessor: dict[str, list[TypedPrompt]] = {}
    for prompt in prompts:
        by_accessor.setdefault(prompt.names.accessor, []).append(prompt)
    out = ["", "", "Folder = str | PathLike[str] | None", "", "",
           "def _load(name: str, variant: str | None, directory: Folder) -> Prompt[Any, Any, Any]:",
           "    output, partial = _TYPES.get((name, variant), (None, None))",
           "    if output is None:",
           "        return load_prompt(name, variant, directory)",
           "    return load_prompt(",
           "        name, variant, directory, output_type=output, partial_type=partial",
           "    )"]
    for accessor, group in sorted(by_accessor.items()):
        out += _accessor(accessor, group, emitter)
    return out


def _accessor(accessor: str, group: list[TypedPrompt], emitter: Emitter) -> list[str]:
    """One function per prompt name; its variants are its overloads (`extract("fast")`)."""
    name = group[0].info.name
    alias = {p.info.variant: f"{p.names.prefix}Prompt" for p in group}
    variants = sum(p.info.variant is not None for p in group)
    about = f"The prompt {name}" + (f", or one of its {variants} variants" if variants > 1 else
                                    ", or its variant" if variants else "")
    body = [*docstring(about + ".", "    "), f"    return _load({_string(name)}, variant, directory)"]
    parameters = {variant: f"variant: {_variant_type(variant, emitter)}" + (" = None" if variant is None else "")
                  for variant in alias}
    if len(alias) == 1:
        [(variant, parameter)] = parameters.items()
        return ["", "", *_signature(accessor, parameter, alias[variant], ":"), *body]
    emitter.typing_names.add("overload")
    out: list[str] = []
    for variant in sorted(alias, key=lambda v: (v is not None, v or "")):
        out += ["", "", "@overload", *_signature(accessor, parameters[variant], alias[variant], ": ...")]
    return [*out, "", "", *_signature(accessor, "variant: str | None = None", "Prompt[Any, Any, Any]", ":"), *body]


def _signature(accessor: str, variant: str, returns: str, end: str) -> list[str]:
    """`def name(variant..., directory: Folder = None) -> Returns:` as ruff formats it when it is long."""
    parameters = f"{variant}, directory: Folder = None"
    line = f"def {accessor}({parameters}) -> {returns}{end}"
    if len(line) <= LINE:
        return [line]
    if len(parameters) + 4 <= LINE:
        return [f"def {accessor}(", f"    {parameters}", f") -> {returns}{end}"]
    return [f"def {accessor}(", f"    {variant},", "    directory: Folder = None,", f") -> {returns}{end}"]


def _variant_type(variant: str | None, emitter: Emitter) -> str:
    if variant is None:
        return "None"
    emitter.typing_names.add("Literal")
    return f"Literal[{_string(variant)}]"


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)
