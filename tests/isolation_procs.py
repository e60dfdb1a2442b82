"""The local server dies with its parent: the scenario the tests (fake and live server) run.

Three processes: the test runs a launcher under a time limit (isolation.run_limited); the launcher
starts an owner that starts the server, signals the owner, and reports whether the server went.
`gone` is imported by the launcher too.
"""

from __future__ import annotations

import json
import os
import signal
import textwrap
from pathlib import Path
from typing import Any

from tests.isolation import run_limited


def gone(pid: int) -> bool:
    """True when `pid` has exited. A zombie counts as gone: it runs nothing any more, and in a
    container nobody may ever reap an orphan."""
    if not Path("/proc").is_dir():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")  # the state follows the name, which may hold ")"


# The owner starts its server from a worker thread that then ends (asyncio.to_thread in generate):
# Linux's parent-death signal follows the forking *thread*, so this is the case that must not kill it.
OWNER = textwrap.dedent('''\
    import asyncio, json, sys, time
    from dotprompt import generate
    from dotprompt.local.model import LocalModel
    from dotprompt._util.shutdown import exit_on_sigterm

    if "--exit-on-sigterm" in sys.argv:
        exit_on_sigterm()
    model = LocalModel()
    asyncio.run(generate(model=model, prompt="hi", config={"maxOutputTokens": 8}))
    server, _ = model.connect()
    print(json.dumps({"server": server.process.pid, "log": str(server.log_path)}), flush=True)
    while True:
        if "--keep-generating" in sys.argv:
            asyncio.run(generate(model=model, prompt="Tell me a very long story.", config={"maxOutputTokens": 2000}))
        else:
            time.sleep(0.1)
''')

LAUNCHER = textwrap.dedent('''\
    import json, os, signal, subprocess, sys, time
    from pathlib import Path
    from tests.isolation_procs import gone

    def default_sigint():  # a background job starts with SIGINT ignored; the owner must see it
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    owner = subprocess.Popen([sys.executable, "-c", {owner!r}, *{flags!r}], stdout=subprocess.PIPE, text=True,
                             preexec_fn=default_sigint)
    started = json.loads(owner.stdout.readline())
    print(json.dumps({{"owner": owner.pid, "server": started["server"]}}), flush=True)
    time.sleep({delay})
    os.kill(owner.pid, signal.{signal})
    owner.wait(10)
    deadline = time.monotonic() + 10
    while not gone(started["server"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    print(json.dumps({{"gone": gone(started["server"]), "owner_status": owner.returncode,
                       "log_kept": Path(started["log"]).exists()}}))
''')


def kill_leftovers(stdout: str) -> None:
    """Kill the owner and server a failed or timed-out launcher left behind (its first line names them)."""
    for line in stdout.splitlines():
        if line.startswith('{"owner"'):
            for pid in json.loads(line).values():
                if not gone(pid):
                    os.kill(pid, signal.SIGKILL)


def run_owner_and_kill(local: Path, sig: str, *flags: str, delay: float = 0.2, timeout: float = 40.0,
                       memory_mb: int = 1024, env: dict[str, str] | None = None) -> Any:
    """The launcher's verdict: whether the server is gone after the owner got `sig`, and what it left."""
    outcome = run_limited(LAUNCHER.format(owner=OWNER, flags=list(flags), delay=delay, signal=sig), timeout=timeout,
                          memory_mb=memory_mb, env={"DOTPROMPT_LOCAL_DIR": str(local), "FAKE_LLAMA": "ok", **(env or {})})
    try:
        assert not outcome.timed_out, f"the launcher did not finish in {timeout} s; stderr:\n{outcome.stderr[-3000:]}"
        assert outcome.returncode == 0, f"launcher exited {outcome.returncode}; stderr:\n{outcome.stderr[-3000:]}"
        return outcome.json()
    finally:
        kill_leftovers(outcome.stdout)
