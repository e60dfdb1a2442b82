"""The package's joints: imports point down the floors, and no module reads another's private names.

Read from the source (every import statement, those inside functions included; imports under
`if TYPE_CHECKING:` are annotations only and are skipped), so a lazy import cannot hide an arrow
that points up.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "dotprompt"

# Floors from the ground up, one entry per top-level package or module of `dotprompt/`: a module's
# floor is its folder's, so the tree itself says where a module sits. A module may import its own
# floor or lower ones, never higher. (generation sits below prompts: Prompt.generate runs the loop,
# the loop never needs a Prompt.) docs/architecture.md explains each folder.
FLOORS: list[tuple[str, ...]] = [
    ("errors", "types", "settings", "identity", "_util"),  # the ground: public shapes and private helpers
    # prompt files, schemas, templates, formats, tools, PDF inputs, grounding; HTTP (below the providers, knowing none)
    ("document", "schema", "engines", "formats", "tools", "documents", "grounding", "_http"),
    # the model seam and the tool seam: providers, the local model, test doubles, MCP servers
    ("providers", "local", "doubles", "mcp"),
    ("observe",),  # run log, spans, cost
    ("generation",),  # the model <-> tool loop
    ("prompts",),  # compile, render, the library
    ("testing", "evals", "batch", "lint", "typegen"),  # what runs prompts: tests, evals, batches, check, types
    ("cli", "ui", "mcpserve", "lsp", "__main__"),  # the commands, and the workbench, MCP and language servers they serve
]


def floor_of(module: str) -> int:
    """The floor of `module` (dotted, without the `dotprompt.` prefix): the floor of its top-level folder."""
    top = module.split(".")[0]
    floors = [number for number, names in enumerate(FLOORS) if top in names]
    assert floors, f"dotprompt.{module} is in no folder of FLOORS: add {top!r} to a floor"
    return floors[0]


def test_every_top_level_entry_has_a_floor():
    entries = {p.stem for p in PACKAGE.iterdir()
               if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").is_file()}
    listed = {name for names in FLOORS for name in names}
    assert entries == listed, f"on no floor: {sorted(entries - listed)}; listed but absent: {sorted(listed - entries)}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def package_of(path: Path) -> list[str]:
    name = module_name(path)
    parts = name.split(".") if name else []
    return parts if path.name == "__init__.py" else parts[:-1]


def is_module(dotted: str) -> bool:
    relative = Path(*dotted.split(".")) if dotted else Path()
    return (PACKAGE / relative).with_suffix(".py").is_file() or (PACKAGE / relative / "__init__.py").is_file()


def runtime_nodes(tree: ast.AST):
    """Every node except those under `if TYPE_CHECKING:`."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            stack.extend(node.orelse)
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import of a dotprompt module, as a dotted name without `dotprompt.`."""
    found = []
    for node in runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_of(path)[: len(package_of(path)) - (node.level - 1)]
                target = ".".join([*base, *(node.module.split(".") if node.module else [])])
            elif node.module and node.module.split(".")[0] == "dotprompt":
                target = node.module.partition(".")[2]
            else:
                continue
            submodules = [f"{target}.{a.name}".lstrip(".") for a in node.names if is_module(f"{target}.{a.name}".lstrip("."))]
            found += [(node.lineno, m) for m in submodules] or [(node.lineno, target)]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name.partition(".")[2]) for a in node.names if a.name.split(".")[0] == "dotprompt"]
    return [(line, m) for line, m in found if m]


def sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p != PACKAGE / "__init__.py")  # __init__ is the top: the API table


def test_every_import_points_down_or_sideways():
    upward = []
    for path in sources():
        here = module_name(path)
        for line, target in imported_modules(path):
            if floor_of(target) > floor_of(here):
                upward.append(f"{path.relative_to(ROOT)}:{line} imports dotprompt.{target} "
                              f"(floor {floor_of(target)} above {floor_of(here)})")
    assert not upward, "\n".join(upward)


def private_names_defined(tree: ast.AST) -> set[str]:
    """Underscore names this module defines: functions, classes, assignments, attributes it sets."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


# The one module allowed to reach into dotpromptz_handlebars' private functions (see its docstring).
UPSTREAM_ADAPTER = "engines.handlebars.upstream"


def _on_self(value: ast.expr) -> bool:
    if isinstance(value, ast.Name):
        return value.id in ("self", "cls")
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super"


# Documented standard-library functions that happen to start with an underscore.
STDLIB_UNDERSCORE = {"os._exit", "sys._getframe"}


def _foreign_private(node: ast.Attribute, own: set[str]) -> bool:
    # self._x / cls._x / super()._x are the class's own (or inherited, as jinja's Undefined is meant
    # to be extended); any other underscore attribute must be defined in this module.
    private = node.attr.startswith("_") and not node.attr.startswith("__")
    allowed = ast.unparse(node) in STDLIB_UNDERSCORE or _on_self(node.value)
    return private and node.attr not in own and not allowed


def test_no_module_reads_another_modules_private_names():
    crossings = []
    for path in sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own = private_names_defined(tree)
        where = path.relative_to(ROOT)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and not (module_name(path) == UPSTREAM_ADAPTER and node.level == 0):
                crossings += [f"{where}:{node.lineno} imports {a.name} from {node.module or '.'}"
                              for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
            elif isinstance(node, ast.Attribute) and _foreign_private(node, own):
                crossings.append(f"{where}:{node.lineno} reads {ast.unparse(node)}")
    assert not crossings, "\n".join(crossings)


def test_one_module_imports_the_handlebars_library():
    importers = [module_name(p) for p in sources()
                 if "dotpromptz_handlebars" in {getattr(n, "module", None) or "" for n in ast.walk(ast.parse(p.read_text()))}
                 or any(isinstance(n, ast.Import) and any(a.name.startswith("dotpromptz_handlebars") for a in n.names)
                        for n in ast.walk(ast.parse(p.read_text())))]
    assert importers == [UPSTREAM_ADAPTER]


def test_the_floor_check_sees_lazy_and_relative_imports(tmp_path, monkeypatch):
    # The checker itself, on a package of its own: an import inside a function, written relative
    # two levels up, is found and resolved to its absolute name.
    package = tmp_path / "dotprompt"
    (package / "generation").mkdir(parents=True)
    (package / "providers").mkdir()
    for folder in (package, package / "generation", package / "providers"):
        (folder / "__init__.py").write_text("")
    (package / "providers" / "registry.py").write_text("")
    source = package / "generation" / "api.py"
    source.write_text("def late():\n    from ..providers.registry import resolve_model\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", package)
    assert imported_modules(source) == [(2, "providers.registry")]
    assert floor_of("prompts.prompt") > floor_of("generation.loop") > floor_of("providers.base") > floor_of("types")


# Raised and caught inside the package, never reaching a user: they need no place in errors.py.
INTERNAL_SIGNALS = {
    "lsp.analysis": {"Stopped"},  # raised inside the analysis thread to stop a stale or slow analysis, caught there
    "engines.handlebars.fast": {"FallbackError"},  # the fast path hands a render back to the reference renderer
    "formats.reading.limits": {"TooDeepError"},  # becomes OutputParseError / OutputValidationError
    "document.files": {"FileChangingError"},  # the library keeps the last whole version and retries
    "document.metadata": {"ToolDefsError"},  # compiling turns it into a PromptFileError at the toolDefs line
    "schema.validator": {"UnsupportedSchemaError"},  # jsonschema takes over
    "testing.paths": {"PathError"},  # becomes a TestFileError / check diagnostic naming the line
    "testing.assertions": {"ExpectedValueError"},  # becomes a TestFileError naming the line
    "testing.regex": {"UnsupportedRegexError"},  # becomes an ExpectedValueError, then a TestFileError naming the line
    "testing.functions": {"FunctionSpecError"},  # becomes a TestFileError, a case failure or a DatasetError naming where
    "evals.compare": {"ScorerFailedError"},  # becomes a DatasetError naming the row
    "cli.common": {"CommandLineError"},  # main() prints it and exits 2
    "engines.budget": {"BudgetExceededError"},  # Prompt.render turns it into a RenderError naming the line
    "_util.finite": {"NonFiniteNumberError"},  # a ValueError: becomes a corrupt recording line or a DatasetError naming the row
    "documents.pdf": {"PdfReadError"},  # becomes an InputValidationError naming the variable (or a UsageError)
    "mcpserve.arguments": {"ArgumentError"},  # becomes the MCP client's invalid-params error naming the argument
}


def test_every_public_exception_lives_in_errors_under_dotprompt_error():
    import dotprompt.errors as errors

    elsewhere = []
    for path in sources():
        if path.name == "errors.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            bases = [ast.unparse(b) for b in getattr(node, "bases", [])]
            is_exception = isinstance(node, ast.ClassDef) and any(b.endswith(("Error", "Exception")) for b in bases)
            if is_exception and not node.name.startswith("_") and \
                    node.name not in INTERNAL_SIGNALS.get(module_name(path), set()):
                elsewhere.append(f"{path.relative_to(ROOT)}:{node.lineno} defines {node.name}")
    assert not elsewhere, "\n".join(elsewhere)
    signals = {"Interrupt", "ToolInputError"}  # a tool's signal to the loop, and the model-facing input error
    for name in errors.__all__:
        value = getattr(errors, name)
        if isinstance(value, type) and issubclass(value, Exception) and name not in signals:
            assert issubclass(value, errors.DotpromptError), name


def top_level(module: str) -> str:
    return module.split(".")[0]


def import_cycles(fold=top_level, *, faces: bool = True) -> list[list[str]]:
    """Groups that import each other (strongly connected), each module folded by `fold` (default: into
    its top-level package or module), the imports read as above; `faces=False` leaves out what the
    packages' `__init__.py` import (they hand names on, as import_cycles.py reads them)."""
    edges: dict[str, set[str]] = {}
    for path in sources():
        if not faces and path.name == "__init__.py":
            continue
        here = fold(module_name(path))
        edges.setdefault(here, set()).update(fold(t) for _, t in imported_modules(path) if fold(t) != here)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = stack[stack.index(node):]
            del stack[stack.index(node):]
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return groups


def test_no_two_packages_import_each_other():
    # Same-floor imports are allowed, but not both ways: a package that needs another's piece and is
    # needed by it means the piece belongs lower (import_cycles.py --packages prints the imports).
    assert import_cycles() == []


def test_no_two_modules_import_each_other():
    assert import_cycles(lambda module: module, faces=False) == []
