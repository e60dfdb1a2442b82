"""Hostile paths in a prompt folder (issue class 6): symlinks out of the folder, FIFOs, directories and
dangling links where files are expected, over-long names.

Every attempt runs in a child process with a time and memory limit (`isolation`), so a hang on a
FIFO is a failing test, not a stuck run. The child prints one JSON line: what each call raised.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.isolation import assert_finishes

# Runs in the child: `attempt(label, fn)` records the outcome of one call as
# {"label": ..., "error": exception class or None, "message": ..., "result": ...}.
PRELUDE = """
import json, os, sys
from pathlib import Path
from dotprompt import PromptLibrary, DotpromptError
from dotprompt.testing.cases import load_test_file
results = []
def attempt(label, fn):
    try:
        value = fn()
        results.append({"label": label, "error": None, "message": "", "result": value})
    except DotpromptError as exc:
        results.append({"label": label, "error": type(exc).__name__, "message": str(exc), "result": None})
    except BaseException as exc:
        results.append({"label": label, "error": "UNEXPECTED " + type(exc).__name__, "message": str(exc),
                        "result": None})
def text(rendered):
    return "".join(p.text or "" for m in rendered.messages for p in m.content)
"""

EPILOGUE = "\nprint(json.dumps(results))\n"


def run(code: str, tmp_path: Path) -> dict[str, dict]:
    outcome = assert_finishes(PRELUDE + code + EPILOGUE, timeout=30, cwd=tmp_path)
    return {r["label"]: r for r in outcome.json()}


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A file outside the prompt folder that a prompt file must never reveal."""
    outside = tmp_path / "outside"
    outside.mkdir()
    path = outside / "secret.txt"
    path.write_text("TOP-SECRET-CONTENT\n", encoding="utf-8")
    (outside / "x.prompt").write_text("OUTSIDE-PROMPT TOP-SECRET-CONTENT\n", encoding="utf-8")
    (outside / "_p.prompt").write_text("OUTSIDE-PARTIAL TOP-SECRET-CONTENT\n", encoding="utf-8")
    return path


def refused(outcome: dict, *errors: str) -> None:
    assert outcome["error"] in errors, outcome
    assert "TOP-SECRET" not in outcome["message"] and "TOP-SECRET" not in json.dumps(outcome["result"]), outcome


# -- symlinks out of the folder ------------------------------------------------------------------

@pytest.mark.slow
def test_symlinks_out_of_the_folder_are_refused(tmp_path, secret):
    folder = tmp_path / "prompts"
    (folder / "inner").mkdir(parents=True)
    (folder / "pw.prompt").symlink_to(secret)
    (folder / "_leak.prompt").symlink_to(secret.parent / "_p.prompt")
    (folder / "uses.prompt").write_text("{% include 'leak' %}\n", encoding="utf-8")
    (folder / "hbs.prompt").write_text("---\ndotprompt.engine: handlebars\n---\n{{> leak}}\n", encoding="utf-8")
    (folder / "ns").symlink_to(secret.parent, target_is_directory=True)
    (folder / "inner" / "ok.prompt").write_text("inside\n", encoding="utf-8")
    (folder / "alias.prompt").symlink_to(folder / "inner" / "ok.prompt")  # stays inside: allowed
    outcomes = run(f"""
lib = PromptLibrary({str(folder)!r})
attempt("prompt", lambda: text(lib.load("pw").render()))
attempt("partial", lambda: text(lib.load("uses").render()))
attempt("hbs partial", lambda: text(lib.load("hbs").render()))
attempt("namespace", lambda: text(lib.load("ns/x").render()))
attempt("namespace partial", lambda: text(lib.from_source("{{% include 'ns/p' %}}").render()))
attempt("check partial file", lambda: lib.check_partial_file({str(folder / "_leak.prompt")!r}))
attempt("inside link", lambda: text(lib.load("alias").render()))
attempt("list", lambda: [i.label for i in lib.prompts()])
""", tmp_path)
    refused(outcomes["prompt"], "PromptFileError")
    assert "pw.prompt" in outcomes["prompt"]["message"] and "outside" in outcomes["prompt"]["message"]
    refused(outcomes["partial"], "PromptFileError")
    assert "_leak.prompt" in outcomes["partial"]["message"]
    refused(outcomes["hbs partial"], "PromptFileError")
    refused(outcomes["namespace"], "PromptFileError", "PromptNotFoundError", "InvalidPromptNameError")
    refused(outcomes["namespace partial"], "PromptFileError")
    refused(outcomes["check partial file"], "PromptFileError")
    assert outcomes["inside link"]["result"] == "inside\n"
    assert "pw" in outcomes["list"]["result"]  # still listed, so `check` reports it


# -- files that are not regular files --------------------------------------------------------------

@pytest.mark.slow
def test_fifos_directories_and_dangling_links_never_hang_or_crash(tmp_path):
    import os

    folder = tmp_path / "prompts"
    folder.mkdir()
    os.mkfifo(folder / "_p.prompt")
    os.mkfifo(folder / "f.prompt")
    os.mkfifo(folder / "x.test.yaml")
    (folder / "_d.prompt").mkdir()
    (folder / "d.test.yaml").mkdir()
    (folder / "gone.prompt").symlink_to(folder / "nowhere.prompt")
    (folder / "_gone.prompt").symlink_to(folder / "nowhere2.prompt")
    (folder / "uses.prompt").write_text("{% include 'p' %}\n", encoding="utf-8")
    (folder / "uses_d.prompt").write_text("{% include 'd' %}\n", encoding="utf-8")
    (folder / "hbs.prompt").write_text("---\ndotprompt.engine: handlebars\n---\n{{> p}}\n", encoding="utf-8")
    outcomes = run(f"""
lib = PromptLibrary({str(folder)!r})
root = Path({str(folder)!r})
attempt("fifo partial file", lambda: lib.check_partial_file(str(root / "_p.prompt")))
attempt("fifo partial include", lambda: text(lib.load("uses").render()))
attempt("fifo partial hbs", lambda: text(lib.load("hbs").render()))
attempt("fifo prompt", lambda: text(lib.load("f").render()))
attempt("fifo test file", lambda: load_test_file(root / "x.test.yaml", root))
attempt("dir partial file", lambda: lib.check_partial_file(str(root / "_d.prompt")))
attempt("dir partial include", lambda: text(lib.load("uses_d").render()))
attempt("dir test file", lambda: load_test_file(root / "d.test.yaml", root))
attempt("dangling prompt", lambda: text(lib.load("gone").render()))
attempt("dangling partial file", lambda: lib.check_partial_file(str(root / "_gone.prompt")))
attempt("list", lambda: [i.label for i in lib.prompts()])
""", tmp_path)
    for label in ("fifo partial file", "fifo partial include", "fifo partial hbs", "fifo prompt", "dir partial file",
                  "dir partial include", "dangling partial file"):
        assert outcomes[label]["error"] == "PromptFileError", outcomes[label]
    for label in ("fifo test file", "dir test file"):
        assert outcomes[label]["error"] == "TestFileError", outcomes[label]
    assert outcomes["dangling prompt"]["error"] in ("PromptFileError", "PromptNotFoundError"), outcomes["dangling prompt"]
    assert "not a regular file" in outcomes["fifo prompt"]["message"]
    assert "f.prompt" in outcomes["fifo prompt"]["message"]
    assert "_p.prompt" in outcomes["fifo partial include"]["message"]
    assert outcomes["list"]["error"] is None


@pytest.mark.slow
def test_check_command_finishes_on_a_fifo_and_a_directory_partial(tmp_path):
    import os

    folder = tmp_path / "prompts"
    folder.mkdir()
    os.mkfifo(folder / "_p.prompt")
    os.mkfifo(folder / "x.test.yaml")
    (folder / "_d.prompt").mkdir()
    (folder / "ok.prompt").write_text("hello\n", encoding="utf-8")
    outcome = assert_finishes(f"""
import json
from dotprompt import PromptLibrary
from dotprompt.lint.check import check_library
found = check_library(PromptLibrary({str(folder)!r}), jobs=1)
print(json.dumps([d.format() for d in found]))
""", timeout=30, cwd=tmp_path)
    lines = outcome.json()
    assert any("_p.prompt" in line and "not a regular file" in line for line in lines), lines
    assert any("_d.prompt" in line for line in lines), lines
    assert any("x.test.yaml" in line for line in lines), lines


@pytest.mark.slow
def test_test_file_symlinked_out_of_the_folder_is_refused(tmp_path, secret):
    folder = tmp_path / "prompts"
    folder.mkdir()
    (secret.parent / "s.test.yaml").write_text("prompt: x\ncases:\n  - name: TOP-SECRET-CONTENT\n", encoding="utf-8")
    (folder / "s.test.yaml").symlink_to(secret.parent / "s.test.yaml")
    outcomes = run(f"""
root = Path({str(folder)!r})
attempt("linked test file", lambda: [c.name for c in load_test_file(root / "s.test.yaml", root)])
attempt("outside on purpose", lambda: [c.name for c in load_test_file(Path({str(secret.parent / "s.test.yaml")!r}), root)])
""", tmp_path)
    refused(outcomes["linked test file"], "TestFileError")
    # A test file named on the command line outside the prompt folder is the caller's choice: still read.
    assert outcomes["outside on purpose"]["result"] == ["TOP-SECRET-CONTENT"]


# -- names -------------------------------------------------------------------------------------------

def test_over_long_and_odd_names_are_invalid_names_not_os_errors(tmp_path):
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "ok.prompt").write_text("fine\n", encoding="utf-8")
    outcomes = run(f"""
lib = PromptLibrary({str(folder)!r})
attempt("long", lambda: lib.load("a" * 5000))
attempt("long part", lambda: lib.load("b/" + "a" * 300))
attempt("deep", lambda: lib.load("/".join(["a"] * 3000)))
attempt("nul", lambda: lib.load("a\\x00b"))
attempt("long variant", lambda: lib.load("ok", "v" * 5000))
attempt("long include", lambda: text(lib.from_source("{{% include '" + "p" * 5000 + "' %}}").render()))
attempt("nul include", lambda: text(lib.from_source("{{% include 'p\\x00q' %}}").render()))
attempt("ok", lambda: text(lib.load("ok").render()))
""", tmp_path)
    for label in ("long", "long part", "deep", "nul", "long variant"):
        assert outcomes[label]["error"] == "InvalidPromptNameError", outcomes[label]
    for label in ("long include", "nul include"):
        assert outcomes[label]["error"] == "PromptFileError", outcomes[label]
    assert outcomes["ok"]["result"] == "fine\n"
