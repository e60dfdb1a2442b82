"""The shape of `dotprompt.engines.handlebars`: one module touches dotpromptz-handlebars, imports point one way."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import dotprompt.engines.handlebars

PACKAGE = Path(dotprompt.engines.handlebars.__file__).parent
# Each module imports only modules before it (function-level imports included).
ORDER = ["names", "upstream", "helpers", "syntax", "to_jinja", "fast", "metered", "engine", "__init__"]


def imports(module: str) -> list[ast.ImportFrom | ast.Import]:
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    return [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]


def test_every_module_is_in_the_order():
    assert sorted(path.stem for path in PACKAGE.glob("*.py")) == sorted(ORDER)


@pytest.mark.parametrize("module", ORDER)
def test_only_upstream_imports_dotpromptz_handlebars(module):
    names = [alias.name for node in imports(module) if isinstance(node, ast.Import) for alias in node.names]
    names += [node.module or "" for node in imports(module) if isinstance(node, ast.ImportFrom) and not node.level]
    touches = any(name.split(".")[0] == "dotpromptz_handlebars" for name in names)
    assert touches == (module == "upstream")


@pytest.mark.parametrize("module", ORDER)
def test_sibling_imports_point_one_way_and_name_public_names(module):
    for node in imports(module):
        if not isinstance(node, ast.ImportFrom) or node.level != 1:
            continue
        sibling = node.module or ""
        assert ORDER.index(sibling) < ORDER.index(module), f"{module} imports {sibling}"
        assert not [alias.name for alias in node.names if alias.name.startswith("_")], f"{module} from {sibling}"
