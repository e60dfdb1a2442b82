"""Prompts from strings, named schemas from pydantic models, and variants side by side."""

from pathlib import Path

from pydantic import BaseModel

from dotprompt import PromptLibrary


class Address(BaseModel):
    street: str
    city: str
    country: str


lib = PromptLibrary(Path(__file__).resolve().parent.parent / "prompts", default_model="openai/gpt-4o-mini")
lib.define_schema("Address", Address)

prompt = lib.from_source("""---
input:
  schema:
    text: string
output:
  schema:
    shipping: Address
    billing?: Address, only when it differs from shipping
---
Find the addresses in: {{ text }}
""")
rendered = prompt.render({"text": "Ship to 1 Main St, Springfield, US"})
print("model:", rendered.model)
print("output schema:", sorted(rendered.output.schema["properties"]))

for variant in (None, "fast"):
    r = lib.load("extract", variant=variant).render({"text": "INV-1, total 10 EUR"})
    print(f"extract[{variant or 'default'}]: model={r.model} config={r.config} messages={len(r.messages)}")
