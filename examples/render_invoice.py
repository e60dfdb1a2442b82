"""Render the invoice-extraction prompt and show exactly what would be sent to the model."""

import json
from pathlib import Path

from dotprompt import load_prompt

HERE = Path(__file__).resolve().parent

extract = load_prompt("extract", directory=HERE.parent / "prompts")
invoice = json.loads((HERE / "inputs" / "invoice.json").read_text(encoding="utf-8"))
rendered = extract.render(invoice)

for message in rendered.messages:
    print(f"[{message.role}]\n{message.text.strip()}\n")
print("output schema fields:", ", ".join(rendered.output.schema["properties"]))
