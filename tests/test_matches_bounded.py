"""The `matches` assertion runs a test file's pattern on a model's output in linear time (RE2), with
Python's meaning of `\\w`, `\\d`, `\\s` and `$`; a pattern RE2 cannot run is an error when the file loads.

The catastrophic pattern `^(\\w+\\s?)*$` on 35 word characters and `!` took hours with Python's `re`;
it runs through `dotprompt test` and the pytest plugin in a child process with a time limit."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dotprompt.testing.cases import TestFileError, load_test_file
from dotprompt.testing.regex import UnsupportedRegexError, compile_pattern, search
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
                                               ("(?<!x)y", "lookaround"), ("(?x) a b", "RE2"),
                                               (r"\bcat\b", "\\b, a word boundary"), (r"x\B", "\\B (not a word boundary)"),
                                               ("(?ai)k", "(?a) with (?i)"), ("a*+", "bad repetition operator: *+"),
                                               ("(?>a)", "RE2")])
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
    (r"(?a)\bcat\b", "a cat!", True),  # ASCII word boundaries, asked for
    (r"(?a)\bcaf\b", "un café!", True),  # é is no ASCII word character
    (r"(?a)^\w+$", "café", False),
    (r"(?a)^\s$", "\x0b", True),  # Python's ASCII \s has \v, RE2's \s has not
    (r"(?a)^[\S]$", "\x0b", False),
    (r"^\d{,3}$", "12", True),  # {,n} is {0,n} in Python; RE2 reads it as text
    (r"^\d{,3}$", "1{,3}", False),
    (r"^a{,}$", "aaa", True),
    (r"^a{}$", "a{}", True),
    (r"^a{1, 2}$", "a{1, 2}", True),  # no repeat: text in both
    (r"^a{x}$", "a{x}", True),
    (r"a(?#a comment)b", "ab", True),
    (r"\N{EM DASH}", "—", True),
    (r"^\é$", "é", True),
    (r"\123", "S", True),  # three octal digits are a character, not a backreference
    (r"^[\1]$", "\x01", True),
    (r"(?u)^\w$", "é", True),
    (r"^[\W]$", "é", False),  # Python's Unicode \W inside a set
    (r"^[\W]$", "!", True),
    (r"^[^\W\d_]+$", "café", True),  # letters only
    (r"^[^\W\d_]+$", "caf3", False),
    (r"^[\S]$", "\u2003", False),
    (r"^[\Sx]+$", "ab", True),
    (r"(?i)^i$", "İ", True),  # Python's (?i) makes I, i, İ and ı one letter
    (r"(?i)^I$", "ı", True),
    (r"(?i)^[a-z]+$", "ıİ", True),
    (r"(?i)^[^a-z]$", "ı", False),
    (r"(?i:^x\u0131$)", "xI", True),
    (r"^i$", "ı", False),
    (r"(?i)^k$", "\u212a", True),  # the Kelvin sign folds to k in both
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


ATOMS = ["a", "i", "I", "\u0131", "\u0130", "k", "\u00e9", "3", "\u0663", "_", "-", " ", ".", r"\w", r"\W", r"\d", r"\D",
         r"\s", r"\S", r"\b", r"\B", r"\A", r"\Z", "^", "$", r"\.", r"\-", r"\u00e9", r"\x41", r"\N{DIGIT THREE}",
         r"\012", r"\t", "[a-z]", "[^a-z]", r"[\w-]", r"[\W]", r"[^\W\d_]", r"[\S]", r"[\d\s]", "[]a]", "[^]a]",
         "[ıi]", r"[\b]", "{", "}", "(?#c)"]
QUANTIFIERS = ["", "", "", "*", "+", "?", "{2}", "{,2}", "{1,}", "{,}", "{1,2}", "*?", "{,2}?"]
FLAGS = ["", "", "(?i)", "(?m)", "(?s)", "(?a)", "(?u)", "(?is)"]
TEXT = ["a", "i", "I", "\u0131", "\u0130", "k", "K", "\u212a", "\u00e9", "3", "\u0663", "_", "-", " ", "\u2003", "\x0b",
        "\n", "A", "\t", ".", "{", "}", ",", "2"]


def random_pattern(rng) -> str:
    def piece(depth: int) -> str:
        if depth < 2 and rng.random() < 0.2:
            opener = rng.choice(["(", "(?:", "(?i:", "(?-i:", "(?a:", "(?m:"])
            body = "".join(piece(depth + 1) for _ in range(rng.randint(1, 3)))
            alternative = "|" + piece(depth + 1) if rng.random() < 0.3 else ""
            return f"{opener}{body}{alternative})" + rng.choice(QUANTIFIERS[:6])
        return rng.choice(ATOMS) + rng.choice(QUANTIFIERS)

    return rng.choice(FLAGS) + "".join(piece(0) for _ in range(rng.randint(1, 4)))


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:Possible nested set")
def test_every_pattern_python_accepts_means_the_same_or_is_refused_at_load():
    import random
    import re
    import warnings


    rng = random.Random(20261203)
    checked = refused = 0
    for _ in range(4000):
        pattern = random_pattern(rng)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                python = re.compile(pattern)
        except re.error:
            continue
        try:
            compile_pattern(pattern)
        except UnsupportedRegexError:
            refused += 1
            continue
        for _ in range(6):
            text = "".join(rng.choice(TEXT) for _ in range(rng.randint(0, 6)))
            assert search(pattern, text) is (python.search(text) is not None), (pattern, text)
        checked += 1
    assert checked > 1500 and refused > 100, (checked, refused)
