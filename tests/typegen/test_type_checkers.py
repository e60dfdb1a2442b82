"""The type checkers themselves prove the generated module: mypy and pyright, run as processes on sample
user code against a module `dotprompt types` wrote. Correct use (input, output, streamed chunks, a
variant, a text prompt, an enum prompt, a schema defined in code) is clean in both; each planted misuse
gives exactly the expected error, by code and line, in both."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import dotprompt
from tests.cli_inprocess import cli
from tests.typegen.project import make_project

PACKAGE_ROOT = Path(dotprompt.__file__).resolve().parent.parent  # the folder holding the dotprompt package

pytestmark = pytest.mark.slow  # each checker takes seconds

GOOD = '''from __future__ import annotations

from myapp import prompt_types as prompts


def use() -> float:
    response = prompts.extract()({"text": "INV-1 ..."})
    invoice = response.output
    count = sum(line.qty for line in invoice.lines)
    if invoice.status == "paid" and invoice.vendor.vat_id is not None:
        return invoice.total + count
    short = prompts.extract("short")({"text": "x"}).output
    return 0.0 if short.paid else float(len(short.number))


async def chunks() -> str:
    run = prompts.extract().stream({"text": "x", "pages": 2})
    async for chunk in run.stream:
        if chunk.output.total is not None:
            print(chunk.output.total + 1)
    final = await run.response
    return final.output.number


def others() -> str:
    kind: str = prompts.route()().output
    text: str = prompts.chat_reply()({"question": "hi"}).output
    receipt = prompts.coded()().output
    tree = prompts.refs()().output
    return kind + text + receipt.shop + tree.root.name + tree.class_
'''

# Each planted misuse, and what each checker must say on its line: (mypy code, pyright rule, words of both).
MISUSES = [
    ('extract({})', "typeddict-item", "reportArgumentType", 'Missing key "text"', '"text" is required'),
    ('extract({"text": "x", "txt": "y"})', "typeddict-unknown-key", "reportArgumentType", 'Extra key "txt"',
     '"txt" is an undefined item'),
    ('extract({"text": 3})', "typeddict-item", "reportArgumentType", 'TypedDict item "text" has type "str"',
     '"Literal[3]" is not assignable to "str"'),
    ('print(out.totl)', "attr-defined", "reportAttributeAccessIssue", '"ExtractOutput" has no attribute "totl"',
     'Cannot access attribute "totl" for class "ExtractOutput"'),
    ('print(out.number + 1)', "operator", "reportOperatorIssue", '("str" and "int")', '"str" and "Literal[1]"'),
    ('if out.status == "cancelled":', "comparison-overlap", "reportUnnecessaryComparison",
     "Literal['paid', 'open', 'overdue']", "Literal['cancelled']"),
    ('print(chunk.output.total + 1)', "operator", "reportOptionalOperand", '("None" and "int")',
     'Operator "+" not supported for "None"'),
    ('print(prompts.extract("short")({"text": "x"}).output.total)', "attr-defined", "reportAttributeAccessIssue",
     '"ExtractShortOutput" has no attribute "total"', 'Cannot access attribute "total" for class "ExtractShortOutput"'),
    ('prompts.extrat()', "attr-defined", "reportAttributeAccessIssue", 'has no attribute "extrat"; maybe "extract"?',
     '"extrat" is not a known attribute of module'),
]

BAD = '''from __future__ import annotations

from myapp import prompt_types as prompts


async def misuse() -> None:
    extract = prompts.extract()
    {}
    {}
    {}
    out = extract({{"text": "x"}}).output
    {}
    {}
    {}
        pass
    async for chunk in extract.stream({{"text": "x"}}).stream:
        {}
    {}
    {}
'''.format(*(m[0] for m in MISUSES))


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = make_project(tmp_path_factory.mktemp("typed"))
    done = cli("types", cwd=root)
    assert done.returncode == 0, done.stderr
    (root / "good.py").write_text(GOOD, encoding="utf-8")
    (root / "bad.py").write_text(BAD, encoding="utf-8")
    # strict equality is what makes both checkers compare an enum with a value outside it
    # and the package where both checkers find it: an editable install (`pip install -e`, as .ci/run does) is an
    # import hook that neither checker follows, where an installed wheel would be found on its own
    (root / "pyrightconfig.json").write_text(json.dumps({"reportUnnecessaryComparison": "error",
                                                         "extraPaths": [str(PACKAGE_ROOT)]}), encoding="utf-8")
    # found through MYPYPATH, the package is read as an installed one is: its own errors not reported
    (root / "mypy.ini").write_text("[mypy]\n\n[mypy-dotprompt.*]\nfollow_imports = silent\n", encoding="utf-8")
    return root


def expected_lines() -> dict[int, tuple[str, str, str, str]]:
    lines = BAD.splitlines()
    return {next(n for n, line in enumerate(lines, 1) if line.strip() == code): rest
            for code, *rest in MISUSES}


def checker(project: Path, *command: str) -> str:
    env = {**os.environ, "MYPYPATH": str(PACKAGE_ROOT)}
    done = subprocess.run([*command], cwd=project, capture_output=True, text=True, timeout=300, env=env)
    return done.stdout + done.stderr


def test_mypy_passes_correct_use_and_names_each_misuse(project):
    out = checker(project, sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(project / ".mypy_cache"),
                  "--config-file", "mypy.ini", "--no-error-summary", "good.py", "bad.py")
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert not [e for e in errors if not e.startswith("bad.py:")], out  # correct use and the module: clean
    found = {int(m.group(1)): (m.group(3), m.group(2))
             for m in (re.match(r"bad\.py:(\d+): error: (.*)  \[([a-z-]+)\]$", e) for e in errors) if m}
    expected = expected_lines()
    assert sorted(found) == sorted(expected), out
    for line, (code, _, words, _) in expected.items():
        assert found[line][0] == code and words in found[line][1], (line, found[line], out)


def test_pyright_passes_correct_use_and_names_each_misuse(project):
    pyright = Path(sys.executable).with_name("pyright")
    out = checker(project, str(pyright), "--pythonpath", sys.executable, "good.py", "bad.py",
                  "myapp/prompt_types.py")
    errors = re.findall(r"^\s+(\S+):(\d+):\d+ - error: (.*?)(?: \((report\w+)\))?$", out, re.M)
    assert not [e for e in errors if not e[0].endswith("bad.py")], out
    by_line: dict[int, list[str]] = {}
    for _, line, message, _ in errors:
        by_line.setdefault(int(line), []).append(message)
    rules = dict(re.findall(r"bad\.py:(\d+):\d+ - error: (?:.|\n)*?\((report\w+)\)", out))
    expected = expected_lines()
    assert sorted(by_line) == sorted(expected), out
    for line, (_, rule, _, words) in expected.items():
        assert rules[str(line)] == rule, (line, rules[str(line)], out)
        block = out.split(f"bad.py:{line}:", 1)[1].split("bad.py:", 1)[0]
        assert words in block, (line, block)


def test_pyright_runs_offline():
    pyright = Path(sys.executable).with_name("pyright")
    done = subprocess.run([str(pyright), "--version"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "pyright" in done.stdout, done.stdout + done.stderr
