"""Project-level promises: the public API, the README's commands, CI, and the public spec suite."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys

import pytest

import dotprompt
from tests.conftest import ROOT


def test_exported_names_are_pinned():
    assert sorted(dotprompt.__all__) == [
        "Chunk", "DotpromptError", "Format", "GenerateActionOptions", "GenerateResponse", "GenerationError",
        "GenerationResponseError", "InputValidationError", "Interrupt", "InvalidPromptNameError", "McpServerError", "Media",
        "Message", "ModelError", "OutputParseError", "OutputValidationError", "Part", "PicoschemaError", "Prompt",
        "PromptFileError", "PromptLibrary", "PromptNotFoundError", "RenderError", "RenderedPrompt", "Resume",
        "SchemaError", "Tool", "ToolContext", "ToolExecutionError", "ToolInputError", "ToolRequest", "ToolResponse",
        "UnknownFormatError", "Usage", "UsageError",
        "__version__",
        "default_library", "define_format", "define_model", "define_tool", "fallback", "generate", "generate_stream",
        "generate_sync", "load_prompt", "preview_request", "providers", "retry", "tool", "validate_and_retry",
    ]
    for name in dotprompt.__all__:
        assert hasattr(dotprompt, name)


def test_type_checkers_see_every_public_name():
    # `import dotprompt` loads most names late (module __getattr__); the TYPE_CHECKING block is
    # what mypy, pyright and IDEs read instead. It must name exactly the public API.
    tree = ast.parse((ROOT / "dotprompt" / "__init__.py").read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    seen = {alias.asname or alias.name for node in block.body for alias in node.names}
    assert seen == set(dotprompt.__all__) - {"__version__"}
    assert (ROOT / "dotprompt" / "py.typed").is_file()


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    head = text.split("\n---\n", 1)[0]
    return [line.strip() for line in head.splitlines() if line.startswith("    ")]


def test_readme_opens_with_the_two_setup_commands_and_ci_runs_the_test_one():
    commands = readme_commands()
    assert len(commands) == 2
    run_examples, run_tests = commands
    assert "dotprompt check" in run_examples and "dotprompt run extract" in run_examples
    assert "pytest" in run_tests
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    install = ".venv/bin/pip install -q -e '.[test]'"
    checks = " && .venv/bin/mypy dotprompt && .venv/bin/ruff check dotprompt tests bench examples"
    assert run_tests.replace(install, install + checks, 1) in ci.splitlines()  # CI also runs the static checks


@pytest.mark.live
def test_readme_example_command_works(tmp_path):
    # The part after the install step, run with this interpreter's console script.
    run_examples = readme_commands()[0]
    steps = run_examples.split(" && ")[2:]
    assert steps[0] == ".venv/bin/dotprompt local setup"
    bindir = re.escape(".venv/bin/")
    for step in steps:
        argv = re.sub(rf"^{bindir}dotprompt", "", step).split()
        done = subprocess.run([sys.executable, "-m", "dotprompt.cli", *argv], cwd=ROOT, capture_output=True,
                              text=True, timeout=900)
        assert done.returncode == 0, step + "\n" + done.stderr


@pytest.mark.slow
def test_examples_scripts_run():
    scripts = sorted((ROOT / "examples").glob("*.py"))
    assert scripts, "examples/ holds runnable scripts"
    for script in scripts:
        done = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"{script.name}:\n{done.stderr}"
        assert done.stdout.strip()


SPEC_RUNNER = ROOT.parent / "shared" / "conformance" / "run_dotprompt_spec.py"


@pytest.mark.skipif(not SPEC_RUNNER.exists(), reason="the public Dotprompt spec suite is not beside this checkout")
def test_public_dotprompt_spec_jinja2_cases_all_pass():
    done = subprocess.run([sys.executable, str(SPEC_RUNNER), "--engine", "jinja2"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]
    assert re.search(r"^64 passed, 0 failed$", done.stdout, re.M), done.stdout[-500:]


def test_the_code_is_ruff_clean():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout[-3000:]


def test_the_version_is_written_once():
    import importlib.metadata

    assert importlib.metadata.version("dotprompt-toolkit") == dotprompt.__version__
    assert "version =" not in (ROOT / "pyproject.toml").read_text(encoding="utf-8").split("[project]")[1].split("[")[0]


def _top_level_names(tree: ast.Module) -> set[str]:
    """Names a module binds at its top level (under `if`/`try` too, `TYPE_CHECKING` blocks included)."""
    names: set[str] = set()
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.If, ast.Try)):
            stack.extend(node.body + node.orelse + [s for h in getattr(node, "handlers", []) for s in h.body])
    return names


def test_every_public_module_declares_all_and_binds_each_name():
    missing, unbound = [], []
    for path in sorted((ROOT / "dotprompt").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if any(part.startswith("_") for part in (parts[:-1] if parts[-1] == "__init__" else parts)):
            continue  # a private module (or inside a private package)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        declared = next((node.value for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                         and "__all__" in {getattr(t, "id", None) for t in
                                           (node.targets if isinstance(node, ast.Assign) else [node.target])}), None)
        if declared is None:
            missing.append(str(path.relative_to(ROOT)))
            continue
        bound = _top_level_names(tree)
        unbound += [f"{path.relative_to(ROOT)}: {name}" for name in ast.literal_eval(declared) if name not in bound]
    assert missing == [], missing
    assert unbound == [], unbound


def test_documented_classes_come_from_the_public_subpackages_and_load_late():
    script = (
        "import sys, dotprompt.providers as p, dotprompt.batch as b\n"
        "early = sorted(m for m in ('dotprompt.providers.openai', 'dotprompt.providers.vertex',"
        " 'dotprompt.providers.anthropic', 'dotprompt.batch.runner') if m in sys.modules)\n"
        "names = {m.__name__: sorted(n for n in m.__all__ if getattr(m, n).__module__.startswith('dotprompt.'))"
        " for m in (p, b)}\n"
        "import json; print(json.dumps([early, names]))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    early, names = json.loads(done.stdout)
    assert early == []  # nothing of the provider or batch machinery loads with the package
    assert {"AnthropicModel", "AzureOpenAIModel", "GeminiModel", "OpenAIModel", "OpenAIResponsesModel", "ProviderConfig",
            "ProviderSpec", "VertexGeminiModel", "define_model", "resolve_model"} <= set(names["dotprompt.providers"])
    assert {"BatchReport", "Row", "run_batch"} <= set(names["dotprompt.batch"])
    for package in ("providers", "batch"):
        tree = ast.parse((ROOT / "dotprompt" / package / "__init__.py").read_text(encoding="utf-8"))
        block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
        lazy = {alias.asname or alias.name for node in block.body for alias in node.names}
        assert lazy == set(ast.literal_eval(next(n.value for n in tree.body if isinstance(n, ast.Assign)
                                                 and n.targets[0].id == "_LAZY")))  # type: ignore[attr-defined]
