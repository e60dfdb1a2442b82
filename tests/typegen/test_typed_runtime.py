"""The runtime side of typed prompts: `load_prompt(name, output_type=Model)` validates the output into the
model, streamed chunks' object outputs are its partial twin, and untyped use stays JSON data."""

from __future__ import annotations

import asyncio
from typing import Literal

import pytest
from pydantic import BaseModel

from dotprompt import OutputValidationError, UsageError, load_prompt
from dotprompt.doubles import ScriptedModel
from dotprompt.schema.partial import partial_model, read_partial

INVOICE = """---
model: scripted
input:
  schema:
    text: string
output:
  schema:
    number: string
    total: number
    status(enum): [paid, open]
    lines(array):
      sku: string
      qty?: integer
---
Read {{ text }}
"""


class Line(BaseModel):
    sku: str
    qty: int | None = None


class Invoice(BaseModel):
    number: str
    total: float
    status: Literal["paid", "open"]
    lines: list[Line]


REPLY = '{"number": "INV-1", "total": 12, "status": "paid", "lines": [{"sku": "A", "qty": 2}]}'


@pytest.fixture
def prompts(folder):
    folder.write("invoice.prompt", INVOICE)
    return folder.path


def _collect(stream):
    async def go():
        return [item async for item in stream]

    return asyncio.run(go())


def test_output_type_validates_the_output_into_the_model(prompts):
    prompt = load_prompt("invoice", directory=prompts, output_type=Invoice)
    response = prompt({"text": "x"}, model=ScriptedModel([REPLY]))
    assert isinstance(response.output, Invoice)
    assert response.output.total == 12.0 and isinstance(response.output.total, float)
    assert response.output.lines == [Line(sku="A", qty=2)]


def test_untyped_use_is_unchanged_json_data(prompts):
    typed = load_prompt("invoice", directory=prompts, output_type=Invoice)
    plain = load_prompt("invoice", directory=prompts)
    assert plain.output_type is None and typed is not plain  # the library's prompt stays untyped
    response = plain({"text": "x"}, model=ScriptedModel([REPLY]))
    assert response.output == {"number": "INV-1", "total": 12, "status": "paid", "lines": [{"sku": "A", "qty": 2}]}


def test_streamed_chunks_are_the_partial_twin_and_the_final_is_the_model(prompts):
    prompt = load_prompt("invoice", directory=prompts, output_type=Invoice)
    *chunks, final = _collect(prompt.stream({"text": "x"}, model=ScriptedModel([REPLY], chunk_size=7)))
    twin = partial_model(Invoice)
    outputs = [c.output for c in chunks if c.output is not None]
    assert outputs and all(type(o) is twin for o in outputs)
    assert outputs[0].total is None  # a field that has not arrived is None, in a model that allows it
    assert outputs[-1].lines[0].sku == "A" and type(outputs[-1].lines[0]).__name__ == "LinePartial"
    assert isinstance(final.output, Invoice)


def test_a_given_partial_type_is_what_chunks_are(prompts):
    class InvoicePartial(BaseModel):
        number: str | None = None
        total: float | None = None

    prompt = load_prompt("invoice", directory=prompts, output_type=Invoice, partial_type=InvoicePartial)
    *chunks, _ = _collect(prompt.stream({"text": "x"}, model=ScriptedModel([REPLY], chunk_size=9)))
    assert {type(c.output) for c in chunks if c.output is not None} == {InvoicePartial}


def test_a_streamed_value_of_the_wrong_type_is_none_in_the_chunk_never_the_wrong_type():
    twin = partial_model(Invoice)
    chunk = read_partial(twin, {"number": "INV-1", "total": "twelve"})
    assert chunk.number == "INV-1" and chunk.total is None


def test_an_output_that_does_not_fit_the_model_names_the_field(prompts):
    class Strict(BaseModel):
        number: int

    prompt = load_prompt("invoice", directory=prompts, output_type=Strict)
    with pytest.raises(OutputValidationError) as caught:
        prompt({"text": "x"}, model=ScriptedModel([REPLY]))
    assert "Strict" in str(caught.value) and "$.number" in str(caught.value)


@pytest.mark.parametrize("bad", [dict, {"type": "object"}, "Invoice"])
def test_output_type_must_be_a_model_class(prompts, bad):
    with pytest.raises(UsageError, match="output_type must be a pydantic model class"):
        load_prompt("invoice", directory=prompts, output_type=bad)


def test_partial_type_without_output_type_is_refused(prompts):
    with pytest.raises(UsageError, match="partial_type= needs output_type="):
        load_prompt("invoice", directory=prompts, partial_type=Invoice)  # type: ignore[call-overload]


def test_the_partial_twin_of_a_recursive_model():
    class Node(BaseModel):
        name: str
        children: list[Node] = []

    Node.model_rebuild()
    twin = partial_model(Node)
    value = twin.model_validate({"children": [{"name": "leaf", "children": [{}]}]})
    assert value.name is None and value.children[0].name == "leaf" and value.children[0].children[0].name is None
