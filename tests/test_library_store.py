"""A prompt folder's file store (`dotprompt/prompts/store.py`), apart from the registry of what the
application defines in code (`prompts/library.py`): one job per module, the same behaviour."""

from __future__ import annotations

import ast

from dotprompt.prompts import library
from dotprompt.prompts.store import PromptFiles, PromptInfo
from tests.conftest import ROOT


def test_the_store_lists_what_the_library_lists(folder):
    folder.write("a.prompt", "x")
    folder.write("a.short.prompt", "x")
    folder.write("billing/extract.prompt", "x")
    folder.write("_shared.prompt", "x")
    lib = folder.library()
    files = PromptFiles(lib.directory)
    assert files.prompts() == lib.prompts()
    assert [info.label for info in files.prompts()] == ["a", "a.short", "billing/extract"]
    assert files.partial_names() == ["shared"] == lib.partials()
    assert files.prompt_path("a", "short") == str(lib.directory / "a.short.prompt")
    assert files.partial_path("shared") == str(lib.directory / "_shared.prompt")
    assert files.prompt_path("missing", None) is None and files.partial_path("../up") is None


def test_the_old_import_paths_give_the_same_objects():
    assert library.PromptInfo is PromptInfo


def test_the_registry_reads_no_file_itself():
    tree = ast.parse((ROOT / "dotprompt/prompts/library.py").read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names}
    called = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    readers = {"read_settled", "read_confirmed", "read_snapshot", "file_stamp", "time", "unicodedata"}
    assert not imported & readers, imported & readers
    assert not called & {"rglob", "lstat", "sleep", "monotonic"}, called & {"rglob", "lstat", "sleep", "monotonic"}
