"""A prompt folder for the MCP server's tests: prompts on the echo model (offline, their reply is their
own rendered text), a variant, one with an image, one with a list output, one on an OpenAI-compatible
loopback server (model errors, a model that never answers), and a broken file."""

from __future__ import annotations

from pathlib import Path

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

PROMPTS = {
    "yesno.prompt": """---
description: Says yes or no.
model: echo
input:
  schema:
    answer: string, what to say
    count?: integer, how many times
    tags?(array): string
output:
  instructions: false
  schema:
    answer: string
    count?: integer
---
{"answer": "{{ answer }}"{% if count %}, "count": {{ count }}{% endif %}}
""",
    "yesno.formal.prompt": """---
description: Says yes or no, formally.
model: echo
input:
  schema:
    answer: string
output:
  instructions: false
  schema:
    answer: string
---
{"answer": "certainly {{ answer }}"}
""",
    "look.prompt": """---
description: Looks at a picture.
model: echo
input:
  schema:
    question: string
---
{{ role("system") }}You describe pictures.
{{ role("user") }}{{ question }}
{{ media(url="data:image/png;base64,""" + PNG + """", content_type="image/png") }}
""",
    "letters.prompt": """---
model: echo
input:
  schema:
    word: string
output:
  format: array
  instructions: false
  schema:
    type: array
    items:
      type: object
      properties: {letter: {type: string}}
---
[{% for c in word %}{"letter": "{{ c }}"}{% if not loop.last %}, {% endif %}{% endfor %}]
""",
    "remote.prompt": """---
description: Asks a model on an OpenAI-compatible server.
model: openai/gpt-test
input:
  schema:
    question: string
output:
  schema:
    answer: string
---
{{ question }}
""",
    "broken.prompt": """---
model: echo
input: [
---
never listed
""",
}


def make_folder(root: Path) -> Path:
    folder = root / "prompts"
    folder.mkdir(parents=True)
    for name, text in PROMPTS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder
