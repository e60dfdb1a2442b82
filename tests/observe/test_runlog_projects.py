"""Each run records its project (the folder of the nearest pyproject.toml, else the working folder);
`dotprompt logs` and the workbench list the current project's runs unless asked for all of them."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from pathlib import Path

from dotprompt import PromptLibrary
from dotprompt.doubles import ScriptedModel
from dotprompt.observe.runlog import LogQuery, RunLog, list_runs
from dotprompt.settings import RunLogSettings, project_root
from dotprompt.ui import runs as ui_runs


def make_project(root: Path) -> Path:
    (root / "prompts").mkdir(parents=True)
    (root / "prompts" / "p.prompt").write_text("---\nmodel: scripted\n---\nhi")
    (root / "pyproject.toml").write_text('[tool.dotprompt]\nprompts_dir = "prompts"\n')
    return root


def run_in(root: Path, log: Path, monkeypatch) -> None:
    monkeypatch.chdir(root)
    lib = PromptLibrary(root / "prompts", log=log)
    asyncio.run(lib.load("p").generate(model=ScriptedModel(["hello"])))
    assert lib.run_log.flush()


def test_the_project_is_the_pyproject_folder_else_the_working_folder(tmp_path, monkeypatch):
    shop = make_project(tmp_path / "shop")
    (shop / "src" / "deep").mkdir(parents=True)
    monkeypatch.chdir(shop / "src" / "deep")
    assert project_root() == shop.resolve()
    bare = tmp_path / "bare"
    bare.mkdir()
    monkeypatch.chdir(bare)
    assert project_root() == bare.resolve()


def test_each_run_records_its_project_and_the_query_filters_by_it(tmp_path, monkeypatch):
    log = tmp_path / "shared" / "logs.db"
    one, two = make_project(tmp_path / "one"), make_project(tmp_path / "two")
    run_in(one, log, monkeypatch)
    run_in(two, log, monkeypatch)
    assert sorted(r["project"] for r in list_runs(log)) == sorted([str(one.resolve()), str(two.resolve())])
    (mine,) = list_runs(log, LogQuery(project=str(one.resolve())))
    assert mine["project"] == str(one.resolve())


def test_the_workbench_lists_its_projects_runs_unless_all(tmp_path, monkeypatch):
    log = tmp_path / "shared" / "logs.db"
    one, two = make_project(tmp_path / "one"), make_project(tmp_path / "two")
    run_in(one, log, monkeypatch)
    run_in(two, log, monkeypatch)
    monkeypatch.chdir(one)
    listed = ui_runs.runs(log, {})
    assert [r["project"] for r in listed["runs"]] == [str(one.resolve())] and listed["project"] == str(one.resolve())
    assert len(ui_runs.runs(log, {"all": "1"})["runs"]) == 2


def test_a_log_written_before_projects_gains_the_column_and_keeps_its_runs(tmp_path, monkeypatch):
    log = tmp_path / "old.db"
    with contextlib.closing(sqlite3.connect(log)) as db:  # the first version's table: no project column
        db.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE, started REAL NOT NULL, "
                   "source TEXT NOT NULL, prompt TEXT, status TEXT NOT NULL)")
        db.execute("INSERT INTO runs (run_id, started, source, prompt, status) VALUES ('old', ?, 'run', 'p', 'ok')",
                   (time.time(),))
        db.execute("PRAGMA user_version=1")
        db.commit()
    (old,) = list_runs(log)
    assert old["run_id"] == "old" and old["project"] is None
    writer = RunLog(RunLogSettings(log))
    writer.add({"run_id": "new", "started": time.time(), "source": "api", "status": "ok", "project": "/somewhere"})
    assert writer.flush()
    writer.close()
    assert [r["project"] for r in list_runs(log)] == ["/somewhere", None]
    assert [r["run_id"] for r in list_runs(log, LogQuery(project="/somewhere"))] == ["new"]
