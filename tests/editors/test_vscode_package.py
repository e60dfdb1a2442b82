"""The VS Code extension as users install it: the `.vsix` that `@vscode/vsce` builds (a zip) holds
the manifest, the compiled client with its one runtime dependency, the grammars, the language
configuration and the shipped JSON Schemas, and none of the sources or build tools. The compiled
client, taken from the package, finds the server the way the docs say."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.editors.vscode_build import EXTENSION, ensure_node_modules

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def vsix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ensure_node_modules()
    out = tmp_path_factory.mktemp("vsix") / "dotprompt.vsix"
    done = subprocess.run(["npx", "--no-install", "vsce", "package", "--out", str(out)], cwd=EXTENSION,
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def test_the_vsix_holds_the_manifest_the_client_and_the_grammars(vsix):
    with zipfile.ZipFile(vsix) as package:
        names = set(package.namelist())
        manifest = json.loads(package.read("extension/package.json"))
        grammar = json.loads(package.read("extension/syntaxes/dotprompt.tmLanguage.json"))
        shipped_schema = package.read("extension/schemas/test-file.schema.json")
    assert manifest["main"] == "./out/extension.js"
    assert {"extension/out/extension.js", "extension/out/server-command.js",
            "extension/syntaxes/test-file.injection.tmLanguage.json", "extension/language-configuration.json",
            "extension/node_modules/vscode-languageclient/package.json", "extension/LICENSE.txt",
            "extension.vsixmanifest"} <= names
    assert grammar["scopeName"] == "source.dotprompt"
    assert [g["scopeName"] for g in manifest["contributes"]["grammars"]] == ["source.dotprompt",
                                                                         "source.dotprompt.test-file"]
    assert shipped_schema == (ROOT / "dotprompt" / "data" / "test-file.schema.json").read_bytes()
    # Sources, tests and build tools stay out of what users download.
    assert not [n for n in names if n.startswith(("extension/src/", "extension/tests/", "extension/scripts/",
                                                  "extension/.gitignore", "extension/tsconfig"))]
    assert not [n for n in names if n.startswith(("extension/node_modules/typescript/",
                                                  "extension/node_modules/@vscode/vsce/"))]


def _server_command(unpacked: Path, folder: Path, configured: list[str]) -> list[str]:
    script = ("const {serverCommand} = require(process.argv[1]);"
              "console.log(JSON.stringify(serverCommand(process.argv[2], JSON.parse(process.argv[3]))));")
    done = subprocess.run(["node", "-e", script, str(unpacked / "extension" / "out" / "server-command.js"),
                           str(folder), json.dumps(configured)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_packaged_client_prefers_the_project_venv_then_the_setting_then_path(vsix, tmp_path):
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(vsix) as package:
        package.extractall(unpacked)
    project = tmp_path / "project"
    project.mkdir()
    setting = ["/opt/tools/dotprompt", "lsp"]
    assert _server_command(unpacked, project, []) == ["dotprompt", "lsp"]
    assert _server_command(unpacked, project, setting) == setting
    venv_dotprompt = project / ".venv" / "bin" / "dotprompt"
    venv_dotprompt.parent.mkdir(parents=True)
    venv_dotprompt.write_text("#!/bin/sh\n")
    assert _server_command(unpacked, project, setting) == [str(venv_dotprompt), "lsp"]
