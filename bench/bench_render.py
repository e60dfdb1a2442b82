"""Render an already-loaded prompt: ours (jinja2) against dotpromptz (Handlebars), same messages.

The prompt has a system and a user message, a 4-item loop and an input schema. Ours validates
the input on every render; dotpromptz's compiled renderer does not validate input at all.
Run with bench/.peers/bin/python (it imports dotpromptz).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any

from _common import Result, arg_parser, report
from _timing import async_block, interleaved_best, sync_block
from dotpromptz import DataArgument, Dotprompt

from dotprompt import PromptLibrary

TARGET_RATIO = 0.10  # jinja2 engine (issue 2)
HANDLEBARS_TARGET_RATIO = 0.20  # our Handlebars engine on the same Handlebars source (issue 6: at least 5x faster)
CALIBRATION_CALLS = 20
FRONTMATTER = """---
input:
  schema:
    name: string
    items(array): string
---
"""
OURS_SOURCE = FRONTMATTER + """{{ role("system") }}
You are a helpful shopping assistant. Answer in one short paragraph.
{{ role("user") }}
Hello, I am {{ name }}. My list:
{% for item in items %}- {{ item }}
{% endfor %}
Which of these can I buy in one shop?
"""
PEER_SOURCE = FRONTMATTER + """{{role "system"}}
You are a helpful shopping assistant. Answer in one short paragraph.
{{role "user"}}
Hello, I am {{name}}. My list:
{{#each items}}- {{this}}
{{/each}}
Which of these can I buy in one shop?
"""
INPUT: dict[str, Any] = {"name": "Ada", "items": ["milk", "eggs", "bread", "coffee"]}

Messages = list[tuple[str, str]]


def flatten(messages: Sequence[Any]) -> Messages:
    """(role, text) pairs, for comparing the two libraries' message models."""
    out = []
    for message in messages:
        role = getattr(message.role, "value", message.role)
        out.append((str(role), "".join(part.text or "" for part in message.content)))
    return out


async def measure(rounds: int, seconds: float, engine: str) -> tuple[list[float], Messages, Messages]:
    source = OURS_SOURCE if engine == "jinja2" else PEER_SOURCE
    prompt = PromptLibrary(None, engine=engine).from_source(source)
    renderer = await Dotprompt().compile(PEER_SOURCE)

    def ours() -> Any:
        return prompt.render(INPUT)

    def peer() -> Awaitable[Any]:
        return renderer(DataArgument(input=INPUT))

    ours_messages, peer_messages = flatten(ours().messages), flatten((await peer()).messages)
    best = await interleaved_best([sync_block(ours), async_block(peer)], rounds, seconds,
                                  calibration_calls=CALIBRATION_CALLS)
    return best, ours_messages, peer_messages


def warn_if_different(ours: Messages, peer: Messages) -> None:
    if ours == peer:
        print("messages: identical (role and text of every message)")
        return
    print("WARNING: the two renders differ")
    print(f"  ours:       {ours!r}")
    print(f"  dotpromptz: {peer!r}")


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="timed rounds per library, best kept (default 10)")
    parser.add_argument("--seconds", type=float, default=0.2, help="length of one round (default 0.2)")
    parser.add_argument("--engine", choices=["jinja2", "handlebars"], default="jinja2",
                        help="our engine: jinja2 (its own source) or handlebars (the same source as dotpromptz)")
    args = parser.parse_args()

    (ours, peer), ours_messages, peer_messages = asyncio.run(measure(args.rounds, args.seconds, args.engine))
    warn_if_different(ours_messages, peer_messages)
    ratio = ours / peer
    target = TARGET_RATIO if args.engine == "jinja2" else HANDLEBARS_TARGET_RATIO
    print(f"ours ({args.engine}, input validated): {ours * 1e6:8.1f} µs per render")
    print(f"dotpromptz (Handlebars, compiled):  {peer * 1e6:8.1f} µs per render")
    print(f"ratio ours/dotpromptz: {ratio:.3f} ({1 / ratio:.1f}x faster)")
    figure = f"{ours * 1e6:.1f} µs vs {peer * 1e6:.1f} µs = {ratio:.3f}"
    name = "render ours/dotpromptz" if args.engine == "jinja2" else "render handlebars ours/dotpromptz"
    report(Result(name, figure, f"<= {target:.2f}", ratio <= target), args.json)


if __name__ == "__main__":
    main()
