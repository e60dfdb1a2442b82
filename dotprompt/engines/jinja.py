"""The jinja2 engine: a sandboxed environment with the Dotprompt filters, line offsets, included names.

The helpers that write role/history/media/section markers, and the step from rendered text to
messages, are engine-neutral and live in markers.py.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Generator, Iterator, Mapping
from itertools import islice
from typing import Any, cast

from jinja2 import BaseLoader, ChainableUndefined, Template, nodes, pass_context
from jinja2.compiler import CodeGenerator, Frame
from jinja2.defaults import DEFAULT_NAMESPACE
from jinja2.exceptions import SecurityError
from jinja2.filters import FILTERS
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEscapeFormatter, SandboxedFormatter
from jinja2.utils import Namespace
from markupsafe import Markup

from .budget import BudgetExceededError, Meter, check_int_bits, check_size, current
from .limits import RENDER_MAX_JSON_INDENT
from .markers import Helper

__all__ = [
    "HANDLEBARS_HINT",
    "LOOP_FILTER",
    "RESERVED_NAMES",
    "BudgetCodeGenerator",
    "BudgetEnvironment",
    "MeteredNamespace",
    "SandboxUndefined",
    "check_indent",
    "included_names",
    "js_text",
    "literal_roles",
    "looks_like_handlebars",
    "make_environment",
    "metered_loop",
    "render_metered",
    "to_json",
    "with_line_offset",
]

# Names a template sees besides the caller's input; they win over input keys of the same name.
RESERVED_NAMES = frozenset({"role", "history", "media", "section", "ctx"})
_HANDLEBARS = re.compile(r"{{~?\s*(?:[#/>^!@]|(?:role|history|media|section|json|ifEquals|unlessEquals)\s+[\"'\w@])")
HANDLEBARS_HINT = ("this looks like Handlebars syntax; write jinja2 "
                   "({{ role(\"system\") }}, {% if x %}, {% include \"name\" %}) or use the handlebars engine: "
                   "add `dotprompt.engine: handlebars` to the frontmatter or PromptLibrary(engine=\"handlebars\")")


def looks_like_handlebars(source: str) -> bool:
    return _HANDLEBARS.search(source) is not None


class SandboxUndefined(ChainableUndefined):
    """Missing values render as empty text (as in Handlebars); blocked attributes fail loudly."""

    __slots__ = ()

    def _blocked(self) -> bool:
        return self._undefined_exception is SecurityError

    def __str__(self) -> str:
        if self._blocked():
            self._fail_with_undefined_error()
        return super().__str__()

    def __getattr__(self, name: str) -> Any:
        if self._blocked():
            self._fail_with_undefined_error()
        return super().__getattr__(name)

    def __getitem__(self, name: Any) -> Any:
        if self._blocked():
            self._fail_with_undefined_error()
        return super().__getitem__(name)


def to_json(value: Any, indent: int | None = None) -> str:
    """`{{ value | json }}`: compact by default, pretty with indent=N; non-ASCII kept as is."""
    if isinstance(value, SandboxUndefined):
        return ""
    if indent:
        check_indent(indent)
        return json.dumps(value, indent=int(indent), ensure_ascii=False, default=_jsonable)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_jsonable)


def js_text(value: Any) -> str:
    """`{{ value | js }}`: the value as Handlebars (JavaScript) prints it: true, a,b, 9 for 9.0, [object Object].

    What `dotprompt convert` writes where jinja2 would print a value otherwise (`True`, `['a', 'b']`, `9.0`)."""
    if value is None or isinstance(value, SandboxUndefined):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, tuple)):
        _check_sized(value)
        return ",".join(js_text(item) for item in value)
    if isinstance(value, Mapping):
        return "[object Object]"
    return str(value)


def check_indent(indent: Any) -> None:
    if isinstance(indent, int) and abs(indent) > RENDER_MAX_JSON_INDENT:
        raise BudgetExceededError(f"render budget exceeded: json indent={indent:,} is over {RENDER_MAX_JSON_INDENT:,}; "
                             "use a small indent such as 2")


def _jsonable(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _finalize(value: Any) -> Any:
    # None renders as empty text, like a missing value, never as the word "None".
    return "" if value is None else value


# -- the render budget in the jinja2 engine ---------------------------------------------------
#
# Constant folding: jinja evaluates constant expressions while compiling (`{{ 10**(10**10) }}` would
# run at load), except intercepted operators, which always run at render time through `call_binop`.
# So every operator that can build something huge is intercepted, and the filters that can are
# guarded (a guard refusing while folding only defers the expression to render time, where the
# refusal is a RenderError with its line). While rendering, the current meter (budget.py) is
# charged by the output, every loop step and every call.

LOOP_FILTER = "_dotprompt_metered_loop"  # wraps the iterable of every {% for %} (see BudgetCodeGenerator)
_SIZED = (str, list, tuple)
_FORMAT_NUMBER = re.compile(r"\d+")
_WIDTH_METHODS = frozenset({"center", "ljust", "rjust", "zfill"})
_LIPSUM = DEFAULT_NAMESPACE["lipsum"]


def _check_sized(value: Any) -> None:
    if isinstance(value, _SIZED):
        check_size(len(value), "text" if isinstance(value, str) else "a list")


def _check_format_spec(spec: str) -> None:
    """One field's format spec as `str.format` applies it, nested fields (`{:{w}}`) already filled in:
    no width or precision past the budget."""
    for number in _FORMAT_NUMBER.findall(spec):
        if len(number) > 6:
            check_size(int(number) if len(number) < 30 else 10 ** 30)


def _check_format(fmt: str, args: Any) -> None:
    """`fmt % args`: no width or precision, written or passed (`%*d`), past the budget. (`str.format`
    checks each field as it fills it in: `_MeteredFormatting`.)"""
    _check_format_spec(fmt)
    if "*" in fmt:
        values = args.values() if isinstance(args, Mapping) else args if isinstance(args, (tuple, list)) else (args,)
        for value in values:
            if isinstance(value, int) and not isinstance(value, bool):
                check_size(abs(value))


class _MeteredFormatting:
    """`str.format` in the sandbox, each field's width and precision checked before it is built.

    Checking the format string alone cannot see a width that comes from an argument (`{:{w}}` with
    w=10**9, `{1:{0[0]}}`): the spec is only known once the formatter has filled it in."""

    def format_field(self, value: Any, format_spec: str) -> Any:
        _check_format_spec(format_spec)
        return super().format_field(value, format_spec)  # type: ignore[misc]  # the formatter class it is mixed into


class _MeteredFormatter(_MeteredFormatting, SandboxedFormatter):
    pass


class _MeteredEscapeFormatter(_MeteredFormatting, SandboxedEscapeFormatter):
    pass


def _check_replace(s: Any, old: Any, new: Any, count: Any = None) -> None:
    if isinstance(s, str) and isinstance(old, str) and isinstance(new, str) and len(new) > len(old):
        found = len(s) + 1 if old == "" else s.count(old)
        if isinstance(count, int) and 0 <= count < found:
            found = count
        check_size(len(s) + found * (len(new) - len(old)))


def _check_str_method(s: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if name in _WIDTH_METHODS:
        width = args[0] if args else kwargs.get("width")
        if isinstance(width, int):
            check_size(width)
    elif name == "expandtabs":
        size = args[0] if args else kwargs.get("tabsize", 8)
        if isinstance(size, int):
            check_size(len(s) + s.count("\t") * size)
    elif name == "replace":
        _check_replace(s, *args[:3], **{k: v for k, v in kwargs.items() if k == "count"})
    elif name == "join" and args:
        _check_join(args[0], s)


def _check_join(items: Any, separator: Any = "", *_: Any, **__: Any) -> None:
    """The separators alone of `separator.join(items)` (the items are already within the budget)."""
    if isinstance(items, (list, tuple, str)) and isinstance(separator, str) and items:
        check_size((len(items) - 1) * len(separator))


def _check_lipsum(n: Any = 5, *_: Any, **kwargs: Any) -> None:
    n = kwargs.get("n", n)
    if isinstance(n, int):
        check_size(n * 400)  # a paragraph is 20 to 100 words; the result is checked too


def _check_center(value: Any, width: Any = 80, *_: Any, **__: Any) -> None:
    if isinstance(width, int):
        check_size(len(str(value)) + width)


def _check_indent(s: Any, width: Any = 4, *_: Any, **__: Any) -> None:
    width = len(width) if isinstance(width, str) else width
    if isinstance(width, int):
        text = str(s)
        check_size(len(text) + (text.count("\n") + 1) * width)


def _check_wordwrap(s: Any, width: Any = 79, break_long_words: Any = True, wrapstring: Any = None,
                    *_: Any, **__: Any) -> None:
    if isinstance(wrapstring, str) and isinstance(width, int):
        text = str(s)
        check_size(len(text) + (len(text) // max(width, 1) + 1) * len(wrapstring))


def _check_format_filter(value: Any, *args: Any, **kwargs: Any) -> None:
    _check_format(str(value), kwargs or args)


def _check_filled(value: Any, count: Any, fill_with: Any = None, *_: Any, **__: Any) -> None:
    if fill_with is not None and isinstance(count, int):
        check_size(count, "a list")


def _check_tojson(value: Any, indent: Any = None, *_: Any, **__: Any) -> None:
    check_indent(indent)


def _guarded(original: Callable[..., Any], check: Callable[..., None]) -> Callable[..., Any]:
    """A built-in filter that refuses arguments building more than the budget, and results past it."""
    skip = 1 if hasattr(original, "jinja_pass_arg") else 0

    @functools.wraps(original)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        check(*args[skip:], **kwargs)
        result = original(*args, **kwargs)
        _check_sized(result)
        return result

    return guarded


_FILTER_CHECKS: dict[str, Callable[..., None]] = {
    "center": _check_center, "indent": _check_indent, "wordwrap": _check_wordwrap, "format": _check_format_filter,
    "replace": _check_replace, "batch": _check_filled, "slice": _check_filled, "tojson": _check_tojson,
    "join": _check_join,
}
GUARDED_FILTERS = {name: _guarded(FILTERS[name], check) for name, check in _FILTER_CHECKS.items()}


class _MeteredLoop:
    """The iterable of a `{% for %}`: each step checks the deadline; `len()` stays cheap."""

    __slots__ = ("items", "meter")

    def __init__(self, items: Any, meter: Meter) -> None:
        self.items = items
        self.meter = meter

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Any]:
        step = self.meter.step
        for item in self.items:
            step()
            yield item


@pass_context
def metered_loop(context: Context, items: Any) -> Any:
    meter = current()
    return items if meter is None else _MeteredLoop(items, meter)


class MeteredNamespace(Namespace):
    """`namespace()`: a value set on it (`{% set ns.s = ns.s ~ ns.s %}` in a loop) stays within the budget."""

    def __setitem__(self, name: str, value: Any) -> None:
        _check_sized(value)
        super().__setitem__(name, value)


class BudgetCodeGenerator(CodeGenerator):
    """jinja's code generator, with the iterable of every `{% for %}` passed through the loop meter."""

    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:  # noqa: N802
        for loop in node.find_all(nodes.For):
            if not (isinstance(loop.iter, nodes.Filter) and loop.iter.name == LOOP_FILTER):
                loop.iter = nodes.Filter(loop.iter, LOOP_FILTER, [], [], None, None, lineno=loop.iter.lineno)
        super().visit_Template(node, frame)


def _tick() -> None:
    meter = current()
    if meter is not None:
        meter.tick()


class BudgetEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox, with the operators and calls that can build something huge checked first."""

    code_generator_class = BudgetCodeGenerator
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.filters.update(GUARDED_FILTERS)
        self.filters[LOOP_FILTER] = metered_loop
        self.globals["namespace"] = MeteredNamespace

    # `{% include %}`, `{% import %}` and `{% extends %}` fetch their template here while rendering: a
    # partial that includes the next one twice, twenty deep, prints nothing and loops over nothing,
    # so the clock is read at each fetch.
    def get_template(self, *args: Any, **kwargs: Any) -> Template:
        _tick()
        return super().get_template(*args, **kwargs)

    def select_template(self, *args: Any, **kwargs: Any) -> Template:
        _tick()
        return super().select_template(*args, **kwargs)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """jinja's sandboxed `str.format` / `format_map`, with a formatter that checks each field (see
        `_MeteredFormatting`). jinja 3.1's own wrapper, the formatter class aside."""
        if super().wrap_str_format(value) is None:
            return None
        owner: str = value.__self__
        formatter = (_MeteredEscapeFormatter(self, escape=owner.escape) if isinstance(owner, Markup)
                     else _MeteredFormatter(self))
        is_format_map = value.__name__ == "format_map"

        def wrapper(*args: Any, **kwargs: Any) -> str:
            if is_format_map:
                if kwargs or len(args) != 1:
                    raise TypeError(f"format_map() takes exactly one argument ({len(args) + len(kwargs)} given)")
                return type(owner)(formatter.vformat(owner, (), args[0]))
            return type(owner)(formatter.vformat(owner, args, kwargs))

        return functools.update_wrapper(wrapper, value)

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "**":
            if isinstance(left, int) and isinstance(right, int) and right > 1 and abs(left) > 1:
                check_int_bits(left.bit_length() * right)
        elif operator == "*":
            if isinstance(left, int) and isinstance(right, int):
                check_int_bits(left.bit_length() + right.bit_length())
            elif isinstance(left, _SIZED) and isinstance(right, int):
                check_size(len(left) * right)
            elif isinstance(right, _SIZED) and isinstance(left, int):
                check_size(len(right) * left)
        elif operator == "+":
            if isinstance(left, _SIZED) and isinstance(right, _SIZED):
                check_size(len(left) + len(right))
        elif operator == "%" and isinstance(left, str):
            _check_format(left, right)
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        if type(__obj) is Helper:  # our own marker helpers (role, history, ...): short markers, safe to call
            for value in args:
                _check_sized(value)
            return __obj(*args, **kwargs)
        meter = current()
        if meter is not None:
            meter.tick()
        for value in args:
            _check_sized(value)
        method = getattr(__obj, "__wrapped__", __obj)
        owner = getattr(method, "__self__", None)
        if isinstance(owner, str):
            _check_str_method(owner, getattr(method, "__name__", ""), args, kwargs)
        elif __obj is _LIPSUM:
            _check_lipsum(*args, **kwargs)
        result = super().call(__context, __obj, *args, **kwargs)
        _check_sized(result)
        return result


PIECES_PER_CHARGE = 16


def render_metered(template: Template, variables: dict[str, Any]) -> str:
    """`template.render(variables)`, charging every piece of output to the current meter.

    Past the budget, the exception is thrown into the template where it is, so its traceback
    (and the RenderError made of it) carries the template line."""
    meter = current()
    if meter is None:
        return template.render(variables)
    parts: list[str] = []
    # A generator (compiled template code), which jinja2 types as an Iterator: `throw` is there.
    pieces = cast("Generator[str, None, None]", template.root_render_func(template.new_context(variables)))
    try:
        # Pieces are taken and joined PIECES_PER_CHARGE at a time in C (islice, join), then charged: a
        # Python step per piece made a small render 1.5x slower. One piece is bounded on its own (the
        # operators and filters that build text check their size first), so a charge overshoots by at
        # most a few pieces.
        while batch := list(islice(pieces, PIECES_PER_CHARGE)):
            text = "".join(batch)
            parts.append(text)
            try:
                meter.spend(len(text))
                meter.tick()
            except BudgetExceededError as exc:
                pieces.throw(exc)
    except Exception:
        template.environment.handle_exception()  # as Template.render: the traceback in template lines
    return "".join(parts)


def make_environment(loader: BaseLoader | None) -> ImmutableSandboxedEnvironment:
    env = BudgetEnvironment(
        loader=loader,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,  # a block tag on its own line leaves no blank line behind
        lstrip_blocks=True,
        undefined=SandboxUndefined,
        finalize=_finalize,
        auto_reload=True,
        cache_size=-1,
    )
    env.filters["json"] = to_json
    env.filters["js"] = js_text
    return env


def with_line_offset(body: str, first_line: int) -> str:
    """Prefix a body so jinja's line numbers are the file's: a comment spanning the frontmatter.

    The body is already stripped of leading whitespace, so the comment's `-` eats nothing.
    """
    if first_line <= 1:
        return body
    return "{#" + "\n" * (first_line - 1) + "-#}" + body


def included_names(ast: nodes.Template) -> list[tuple[str, int]]:
    """Constant partial names used by `{% include %}` / `{% import %}`, with their lines."""
    found: list[tuple[str, int]] = []
    kinds = (nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)
    for node in ast.find_all(kinds):  # typed as their base class: isinstance below tells the checker which
        if isinstance(node, kinds) and isinstance(node.template, nodes.Const) and isinstance(node.template.value, str):
            found.append((node.template.value, node.lineno))
    return found


def literal_roles(ast: nodes.Template) -> list[tuple[str, int]]:
    """(name, line) of each `role("name")` call written with a string literal."""
    out = []
    for call in ast.find_all(nodes.Call):
        if isinstance(call.node, nodes.Name) and call.node.name == "role" and len(call.args) == 1 \
                and isinstance(call.args[0], nodes.Const) and isinstance(call.args[0].value, str):
            out.append((call.args[0].value, call.lineno))
    return out
