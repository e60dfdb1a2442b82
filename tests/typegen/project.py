"""A sample project for the typed-prompt tests: prompts with nested objects, arrays, enums, optional and
nullable fields, descriptions, $ref/$defs, keys Python cannot spell, a variant with a different schema,
a text prompt, an enum prompt, and an output schema defined in code."""

from __future__ import annotations

from pathlib import Path

PROMPTS = {
    "extract.prompt": """---
description: Read an invoice.
input:
  schema:
    text: string, the invoice text
    currency_hint?: string
    pages?: integer
  default:
    pages: 1
output:
  schema:
    number: string, the invoice number
    total: number
    status(enum): [paid, open, overdue]
    vendor(object):
      name: string
      vat_id?: string
    lines(array):
      sku: string
      qty: integer
---
Read {{ text }}
""",
    "extract.short.prompt": """---
input:
  schema:
    text: string
output:
  schema:
    number: string
    paid: boolean
---
Read {{ text }}
""",
    "refs.prompt": """---
output:
  schema:
    type: object
    description: A tree of "parts".
    properties:
      root: {$ref: "#/$defs/Part"}
      class: {type: string}
      first-name: {type: [string, "null"]}
      tags: {type: object, additionalProperties: {type: integer}}
      choice: {anyOf: [{type: string}, {type: integer}]}
    required: [root, class]
    $defs:
      Part:
        type: object
        properties:
          name: {type: string}
          children: {type: array, items: {$ref: "#/$defs/Part"}}
        required: [name]
---
Parts
""",
    "chat/reply.prompt": """---
input:
  schema:
    question: string
---
{{ question }}
""",
    "route.prompt": """---
output:
  format: enum
  schema:
    type: string
    enum: [billing, bug]
---
Route
""",
    "coded.prompt": """---
output:
  schema: Receipt
---
Receipt
""",
}

SCHEMAS = """from pydantic import BaseModel


class Receipt(BaseModel):
    shop: str
    amount: float
"""


def make_project(root: Path) -> Path:
    """The project under `root` (pyproject.toml naming myapp/schemas.py and myapp/prompt_types.py); returns root."""
    for name, text in PROMPTS.items():
        path = root / "prompts" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "myapp").mkdir(exist_ok=True)
    (root / "myapp" / "__init__.py").write_text("", encoding="utf-8")
    (root / "myapp" / "schemas.py").write_text(SCHEMAS, encoding="utf-8")
    (root / "pyproject.toml").write_text('[tool.dotprompt]\nschemas = ["myapp/schemas.py"]\n'
                                         'types = "myapp/prompt_types.py"\n', encoding="utf-8")
    return root
