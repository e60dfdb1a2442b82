"""A prompt over a Ray Data dataset: `map_prompt(ds, "extract", ...)` (extra `dotprompt-toolkit[ray]`).

    import ray, dotprompt.batch.ray
    ds = ray.data.read_json("invoices.jsonl")          # or read_parquet, read_csv, from_items...
    out = dotprompt.batch.ray.map_prompt(ds, "extract", prompts_dir="prompts", workers=4, in_flight=16)
    out.write_parquet("extracted/")                     # any format Ray Data writes

`map_batches` runs a pool of `workers` actors. Each builds, once, one `PromptLibrary` and loads the
prompt, and keeps one event loop whose pooled HTTP clients (aiohttp when installed) live as long as
the actor; it runs each batch with `in_flight` rows at once. Nothing is pickled but the settings
passed here: prompts are read from `prompts_dir` (a path every node can see, or shipped with
`ray.init(runtime_env={"working_dir": ...})`), models are resolved by name from each worker's
environment (API keys, base URLs), and custom tools or models reach a worker in one of two ways:
`tools=["my_pkg.tools", ...]` modules are imported in each actor and their `@tool` objects defined on
its library, and `setup=callable` runs once per actor before anything else (e.g. `define_model`;
it is pickled by cloudpickle: by reference when its module is importable on the workers, else by
value). The library is `project_library(prompts_dir)`, so `[tool.dotprompt] tools` of the
pyproject.toml found from the worker's folder load as in a local run.

Output columns, beside the input's own: `key` (the row's identity: `id:<id>` from an `id` column,
else a hash of its content), `output` (the parsed output as JSON text), `error` (JSON text:
type, message and the model's reply when there was one; null on success), `usage` (JSON text),
`cost` (US dollars, when the model's price is known), `repairs` (JSON text list), `prompt` (the
prompt's identity, when it has one), `latency_ms` and `grounding` (JSON text: where each output
value is in the row's input, when the prompt grounds its output). JSON text keeps every column one type, so
Parquet, CSV and JSON lines all hold them whatever the output schema.

A failing row is a row with an error, never a failed job. Ray Data's actor pools restart a dead
actor and retry its tasks (its defaults, `max_restarts=-1`, `max_task_retries=-1`): a worker that
dies (killed, out of memory, its node lost) is restarted and its batch run again by Ray.
`resume_filter(ds, written_keys(folder))` skips rows already written successfully (by key), which
`dotprompt run --engine ray --resume` uses.
"""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from .._http.client import close_clients, select_batch_transport
from .._util.redact import known_secrets, redact, redacted_json
from ..prompts.library import PromptLibrary
from ..prompts.loader import project_library
from ..tools.define import Tool
from .runner import row_of, run_row

__all__ = ["COLUMNS", "PromptActor", "map_prompt", "resume_filter", "written_keys"]

COLUMNS = ("key", "output", "error", "usage", "cost", "repairs", "prompt", "latency_ms", "grounding")


def _ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        from ..errors import UsageError

        raise UsageError("dotprompt.batch.ray needs Ray Data: pip install 'dotprompt-toolkit[ray]'") from None
    return ray


class PromptActor:
    """One Ray actor: a prompt library, an event loop with its HTTP clients, `in_flight` rows at a time."""

    def __init__(self, prompt: str, prompts_dir: str | None, variant: str | None, model: str | None, in_flight: int,
                 tools: tuple[str, ...], setup: Callable[[], Any] | None, engine: str | None = None) -> None:
        if setup is not None:
            setup()
        library = project_library(prompts_dir, engine=engine) if prompts_dir else PromptLibrary(None, engine=engine or "auto")
        for module in tools:
            for value in vars(importlib.import_module(module)).values():
                if isinstance(value, Tool):
                    library.define_tool(value)
        self.prompt = library.load(prompt, variant)
        self.model = model
        self.in_flight = max(1, in_flight)
        self.loop = asyncio.new_event_loop()
        self.kind = ""

    def __call__(self, batch: Mapping[str, Any]) -> dict[str, list[Any]]:
        columns = {name: _as_list(values) for name, values in batch.items()}
        count = len(next(iter(columns.values()), []))
        rows = [{name: values[i] for name, values in columns.items()} for i in range(count)]
        records = self.loop.run_until_complete(self._run(rows))
        out = {name: values for name, values in columns.items() if name not in COLUMNS}
        secrets = known_secrets()  # once a batch: reading the environment per cell would cost more than the rows
        for name in COLUMNS:
            field = "cost_usd" if name == "cost" else name  # the batch record's name for it
            out[name] = [_column(name, record.get(field), secrets) for record in records]
        return out

    async def _run(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.kind = select_batch_transport()  # the loop's clients stay open from batch to batch
        limit = asyncio.Semaphore(self.in_flight)

        async def one(number: int, value: dict[str, Any]) -> dict[str, Any]:
            async with limit:
                return await run_row(self.prompt, row_of(value, number), self.model)

        return await asyncio.gather(*(one(number, value) for number, value in enumerate(rows, start=1)))

    def __del__(self) -> None:
        loop = getattr(self, "loop", None)
        if loop is not None and not loop.is_closed() and self.kind:
            try:
                loop.run_until_complete(close_clients(self.kind))
            finally:
                loop.close()


def _as_list(values: Any) -> list[Any]:
    return values.tolist() if hasattr(values, "tolist") else list(values)


def _column(name: str, value: Any, secrets: list[str] | None = None) -> Any:
    """One column of a result row, every known key masked, as the local runner masks its output file."""
    if name in ("output", "error", "usage", "repairs", "prompt", "grounding"):
        return None if value is None else redacted_json(value, secrets)
    if name in ("cost", "latency_ms"):
        return None if value is None else float(value)
    return None if value is None else redact(str(value), secrets)


def map_prompt(ds: Any, prompt: str, *, prompts_dir: str | Path | None = None, variant: str | None = None,
               model: str | None = None, workers: int = 2, in_flight: int = 16, batch_size: int = 64,
               tools: Iterable[str] = (), setup: Callable[[], Any] | None = None, num_cpus: float = 0.5,
               engine: str | None = None) -> Any:
    """`ds` with the prompt's result for each row (columns in the module docstring); lazy, like every
    Ray Data transform. `num_cpus` is what each actor reserves: its work is waiting on the network.
    `engine` is the template engine of files that name none, as `PromptLibrary(engine=...)` takes it."""
    ray = _ray()
    return ds.map_batches(
        PromptActor, batch_size=batch_size, batch_format="numpy", num_cpus=num_cpus,
        compute=ray.data.ActorPoolStrategy(size=workers),
        fn_constructor_kwargs={"prompt": prompt, "prompts_dir": str(prompts_dir) if prompts_dir else None,
                               "variant": variant, "model": model, "in_flight": in_flight, "tools": tuple(tools),
                               "setup": setup, "engine": engine})


def written_keys(folder: str | Path) -> set[str]:
    """The keys of rows written successfully in an output folder of JSON-lines files (from earlier runs)."""
    done: set[str] = set()
    root = Path(folder)
    if not root.is_dir():
        return done
    for path in sorted(root.rglob("*.json*")):
        with open(path, "rb") as handle:
            for raw in handle:
                try:
                    record = json.loads(raw)
                except ValueError:
                    continue  # a file torn by a crash: its rows run again
                if isinstance(record, dict) and record.get("error") is None and isinstance(record.get("key"), str):
                    done.add(record["key"])
    return done


def resume_filter(ds: Any, done: set[str]) -> Any:
    """`ds` without the rows whose key is in `done`."""
    if not done:
        return ds
    return ds.filter(lambda row: row_of(_plain(row)).key not in done)


def _plain(row: Mapping[str, Any]) -> dict[str, Any]:
    return {name: (value.tolist() if hasattr(value, "tolist") else value) for name, value in row.items()}
