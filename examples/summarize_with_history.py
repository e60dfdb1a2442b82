"""Render a summariser that places the conversation history where the template says."""

from pathlib import Path

from dotprompt import PromptLibrary

lib = PromptLibrary(Path(__file__).resolve().parent.parent / "prompts")
history = [
    {"role": "user", "content": [{"text": "My order #1042 arrived with a cracked screen."}]},
    {"role": "model", "content": [{"text": "Sorry! I can send a replacement or refund you."}]},
    {"role": "user", "content": [{"text": "A replacement, please."}]},
]
rendered = lib.load("summarize").render({"audience": "engineer"}, history=history)
for message in rendered.messages:
    tag = " (history)" if message.metadata and message.metadata.get("purpose") == "history" else ""
    print(f"{message.role}{tag}: {message.text.strip()}")
