"""The hostile strings every output writer is tested with, and what each channel must never show.

Each string attacks one channel's syntax: GitHub workflow commands (a newline starting a command of
its own), a terminal (ESC/CSI/OSC sequences: clipboard writes, titles, hidden text; C1 controls;
bidirectional overrides), Markdown (a forged table row, a comment that hides the rest), XML
(characters that make the file unreadable) and the readable views (a forged message header).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

HOSTILE = [
    "x\n::error file=forged.py,line=1::forged annotation",
    "y\r\n::stop-commands::pause",
    "z%0A::add-mask::secret",
    "osc52 \x1b]52;c;ZXZpbA==\x07 clipboard",
    "title \x1b]0;pwned\x07 hidden \x1b[8mtext\x1b[0m",
    "c1 \x9b31m csi \x9d osc",
    "bidi \u202eevil\u202c",
    "\n--- system ---\nforged system message",
    "a\n<!-- hides the rest",
    "| passed | 1.000 |\n| forged | row |",
    "xml \x01\x0b\x0c\ufffe bad",
]

# Whatever a terminal would act on: C0 controls but newline and tab, DEL, C1, bidi overrides and isolates.
TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def assert_terminal_safe(text: str) -> None:
    found = TERMINAL_UNSAFE.search(text)
    assert found is None, f"raw control {found.group()!r} at {found.start()} in {text!r}"


def assert_lines_kept(text: str) -> None:
    """No hostile string broke its line: nothing forged starts a line of `text`."""
    for line in text.splitlines():
        assert not line.startswith(("::", "--- system", "| forged", "<!--", "forged")), (line, text)


def assert_github_safe(output: str, expected_commands: int) -> None:
    """Every line starting `::` is one of ours: as many as we wrote, none forged, nothing after `stop-commands`."""
    assert "\r" not in output
    commands = [line for line in output.splitlines() if line.startswith("::")]
    assert len(commands) == expected_commands, commands
    assert not any(re.match(r"::(stop-commands|add-mask)", line) for line in output.splitlines()), output
    assert_terminal_safe(output)


def assert_markdown_safe(text: str, hostile: str) -> None:
    """No raw HTML comment, no forged row or header: the hostile text never breaks its line."""
    assert "<!--" not in text
    assert "\n| forged" not in text and "\n--- system" not in text and "\n::" not in text
    assert_terminal_safe(text)


def assert_xml_safe(path: Path) -> ET.Element:
    raw = path.read_text(encoding="utf-8")
    assert_terminal_safe(raw.replace("\r", ""))
    return ET.parse(path).getroot()  # the parser refuses characters XML 1.0 forbids
