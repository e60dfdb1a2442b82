"""The `matches` assertion runs a test file's pattern on a model's output in linear time (RE2), with
Python's meaning of `\\w`, `\\d`, `\\s` and `$`; a pattern RE2 cannot run is an error when the file loads.

The catastrophic pattern `^(\\w+\\s?)*$` on 35 word characters and `!` took hours with Python's `re`;
it runs through `dotprompt test` and the pytest plugin in a child process with a time limit."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dotprompt.testing.cases import TestFileError, load_test_file
from dotprompt.testing.regex import search
from tests.channels.limited_cli import cli
from tests.cli_inprocess import cli as cli_inprocess
from tests.echo_project import PROMPT

EVIL = r"^(\w+\s?)*$"
SUBJECT = "a" * 35 + "!"


def project(tmp_path, pattern: str, answer: str):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "yesno.prompt").write_text(PROMPT)
    (prompts / "yesno.test.yaml").write_text(
        f"cases:\n  - name: evil\n    input: {{answer: {answer!r}}}\n    expect:\n      paths:\n"
        f"        - {{path: $.answer, matches: '{pattern}'}}\n")
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\nprompts_dir = "prompts"\npytest = true\n')
    return prompts


@pytest.mark.slow
def test_a_catastrophic_pattern_fails_the_case_at_once_in_dotprompt_test(tmp_path):
    project(tmp_path, EVIL, SUBJECT)
    done = cli("test", "--record", cwd=tmp_path, env={"XDG_DATA_HOME": str(tmp_path / "data")}, timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "$.answer: expected matches" in done.stdout + done.stderr, done.stdout + done.stderr


@pytest.mark.slow
def test_a_catastrophic_pattern_fails_the_case_at_once_under_pytest(tmp_path, cli_env):
    prompts = project(tmp_path, EVIL, SUBJECT)
    cli("test", "--record", cwd=tmp_path, env={"XDG_DATA_HOME": str(tmp_path / "data")}, timeout=60)  # the pattern runs
    run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(prompts)]
    done = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, env=cli_env, timeout=60)
    assert done.returncode == 1 and "1 failed" in done.stdout, done.stdout + done.stderr


def test_a_matching_output_still_passes(tmp_path, cli_env):
    project(tmp_path, EVIL, "many words here")
    done = cli_inprocess("test", "--record", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("pattern", "what"), [(r"(a)\1", "backreference"), ("(?=a)b", "lookaround"),
                                               ("(?<!x)y", "lookaround"), ("(?x) a b", "RE2")])
def test_a_pattern_re2_cannot_run_is_a_load_error_naming_file_case_and_pattern(tmp_path, pattern, what):
    path = tmp_path / "p.test.yaml"
    path.write_text(f"cases:\n  - name: mine\n    expect:\n      paths:\n        - {{path: $.a, matches: '{pattern}'}}\n")
    with pytest.raises(TestFileError) as caught:
        load_test_file(path, tmp_path)
    message = str(caught.value)
    assert caught.value.path == str(path) and caught.value.line == 5
    assert "case 'mine'" in message and repr(pattern) in message and what in message, message


def test_dotprompt_test_reports_the_load_error_in_one_line(tmp_path, cli_env):
    project(tmp_path, r"(\w)\1", "aa")
    done = cli_inprocess("test", "--record", cwd=tmp_path, env=cli_env)
    assert done.returncode != 0 and "yesno.test.yaml:6" in done.stderr and "backreference" in done.stderr, done.stderr


@pytest.mark.parametrize(("pattern", "text", "found"), [
    (r"^\w+$", "café", True),  # \w is Unicode, as in Python
    (r"^\d+$", "٣٤", True),  # Arabic-Indic digits are \d in Python
    (r"^\d+$", "12a", False),
    (r"a\sb", "a\u2003b", True),  # an em space is \s
    (r"a\sb", "a\x1cb", True),  # so is a file separator, in Python
    (r"^\W$", "é", False),
    (r"^\S+$", "a\u00a0b", False),
    (r"^[\w-]+$", "naïve-x", True),
    (r"^[^\d]+$", "abc", True),
    (r"^[^\d]+$", "a٣", False),
    (r"^done$", "done\n", True),  # `$` before a final newline, as in Python
    (r"^done$", "done\n\n", False),
    (r"(?m)^b$", "a\nb\nc", True),
    (r"^a\Z", "a", True),
    (r"^a\Z", "a\n", False),
    (r"\$5", "costs $5", True),
    (r"[$]", "$", True),
    (r"\\w", "\\w", True),  # an escaped backslash, then a plain w
    (r"(?i)STRASSE", "strasse", True),
    (r"\bcat\b", "a cat!", True),
    (r"^[]a]+$", "]a]", True),  # a `]` first in a set is a member
    (r"^[^]a]+$", "bc", True),
    (r"^[[:alpha:]]$", "a]", True),  # in Python that is a set of `[:alph` and a `]`, not a POSIX class
    (r"^[[:alpha:]]$", "b", False),
    (r"^caf\u00e9$", "café", True),
    (r"^\x41\U0001F600$", "A😀", True),
    (r"a\0", "a\x00", True),
    (r"(?m:a$)\nb", "a\nb", True),
    (r"x$", "x\ud800", False),  # a lone surrogate in the text is matched, not an error
])
@pytest.mark.filterwarnings("ignore:Possible nested set")  # Python's own warning for `[[`
def test_python_meaning_is_kept(pattern, text, found):
    import re

    assert (re.search(pattern, text) is not None) is found  # the case states Python's own answer
    assert search(pattern, text) is found
