"""Makes docs/editors/neovim-diagnostic.png: a real Neovim, in a real terminal (tmux), set up as
docs/editors.md says, showing what `dotprompt lsp` reports on a prompt with a typo.

The terminal's screen (tmux capture-pane, with its colours) is turned into HTML and photographed by
headless chromium. Run it from the repository: `.venv/bin/python editors/neovim/screenshot.py`.
Needs tmux, nvim and chromium (Debian's packages)."""

from __future__ import annotations

import argparse
import html
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "editors" / "neovim" / "dotprompt.lua"
COLUMNS, ROWS = 100, 18

PROMPT = """\
---
model: openai/gpt-4o-mini
input:
  schema:
    customer(object):
      name: string
      email: string
---
{{ role("system") }}
{% include "style" %}
{{ role("user") }}
Write to {{ customer.name }} at {{ custmer.email }}.
"""

BASIC = ["#1e1e1e", "#e06c75", "#98c379", "#e5c07b", "#61afef", "#c678dd", "#56b6c2", "#dcdfe4",
         "#5c6370", "#ff7a85", "#b5e890", "#ffd68a", "#7cc4ff", "#de95f0", "#7fd6e0", "#ffffff"]


def _xterm(n: int) -> str:
    if n < 16:
        return BASIC[n]
    if n < 232:
        cube = ((n - 16) // 36, (n - 16) // 6 % 6, (n - 16) % 6)
        return _hex(*(0 if c == 0 else 55 + 40 * c for c in cube))
    level = 8 + 10 * (n - 232)
    return _hex(level, level, level)


def _hex(r: int, g: int, b: int) -> str:
    return f"#{r:02x}{g:02x}{b:02x}"


def _apply(codes: list[int], style: dict[str, object]) -> None:
    """One SGR sequence's codes applied to the current style (fg, bg, bold, underline, reverse)."""
    i = 0
    while i < len(codes):
        code = codes[i]
        if code == 0:
            style.clear()
        elif code in (1, 4, 7):
            style[{1: "bold", 4: "underline", 7: "reverse"}[code]] = True
        elif code in (22, 24, 27):
            style.pop({22: "bold", 24: "underline", 27: "reverse"}[code], None)
        elif 30 <= code <= 37 or 90 <= code <= 97:
            style["fg"] = BASIC[code - 30 if code < 90 else code - 82]
        elif 40 <= code <= 47 or 100 <= code <= 107:
            style["bg"] = BASIC[code - 40 if code < 100 else code - 92]
        elif code in (39, 49):
            style.pop("fg" if code == 39 else "bg", None)
        elif code in (38, 48) and i + 2 < len(codes) and codes[i + 1] == 5:
            style["fg" if code == 38 else "bg"] = _xterm(codes[i + 2])
            i += 2
        elif code in (38, 48) and i + 4 < len(codes) and codes[i + 1] == 2:
            style["fg" if code == 38 else "bg"] = _hex(*codes[i + 2:i + 5])
            i += 4
        i += 1


def _span(text: str, style: dict[str, object]) -> str:
    fg, bg = style.get("fg", BASIC[7]), style.get("bg", BASIC[0])
    if style.get("reverse"):
        fg, bg = bg, fg
    css = f"color:{fg};background:{bg}"
    css += ";font-weight:bold" if style.get("bold") else ""
    css += ";text-decoration:underline" if style.get("underline") else ""
    return f'<span style="{css}">{html.escape(text)}</span>'


def ansi_to_html(screen: str) -> str:
    style: dict[str, object] = {}
    out = []
    for piece in re.split(r"(\x1b\[[0-9;]*m)", screen):
        if piece.startswith("\x1b["):
            _apply([int(c) if c else 0 for c in piece[2:-1].split(";")], style)
        elif piece:
            out.append(_span(piece, style))
    return ("<!doctype html><meta charset=utf-8><body style='margin:0;background:#1e1e1e'>"
            "<pre style='margin:0;padding:12px;font:15px/1.35 \"DejaVu Sans Mono\",monospace'>"
            + "".join(out) + "</pre>")


def _project(folder: Path, dotprompt: Path) -> None:
    (folder / "pyproject.toml").write_text('[project]\nname = "shop"\nversion = "0"\n')
    (folder / "_style.prompt").write_text("Answer in two short sentences, politely.\n")
    (folder / "ask.prompt").write_text(PROMPT)
    (folder / ".venv" / "bin").mkdir(parents=True)
    (folder / ".venv" / "bin" / "dotprompt").symlink_to(dotprompt)


def capture(folder: Path) -> str:
    session = f"dotprompt-shot-{os.getpid()}"
    nvim = f"nvim --clean --cmd 'luafile {SETUP}' --cmd 'set number' ask.prompt"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", str(COLUMNS), "-y", str(ROWS),
                    "-c", str(folder), "-e", "TERM=xterm-256color", nvim], check=True)
    try:
        for _ in range(300):
            screen = subprocess.run(["tmux", "capture-pane", "-p", "-e", "-t", session],
                                    capture_output=True, text=True, check=True).stdout
            if "■" in screen:
                break
            time.sleep(0.2)
        else:
            raise SystemExit(f"no diagnostic on the screen after 60 s:\n{screen}")
        # What a user does next: highlight the template, go to the line, read the whole message.
        look = ":syntax on | set syntax=htmldjango | hi NormalFloat ctermbg=237 | hi SignColumn ctermbg=NONE"
        for keys in (look, "12G", "35|", ":lua vim.diagnostic.open_float()"):
            subprocess.run(["tmux", "send-keys", "-t", session, keys, *(["Enter"] if keys[0] == ":" else [])],
                           check=True)
            time.sleep(0.5)
        time.sleep(1)
        return subprocess.run(["tmux", "capture-pane", "-p", "-e", "-t", session],
                              capture_output=True, text=True, check=True).stdout
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dotprompt", type=Path, default=Path(sys.executable).parent / "dotprompt",
                        help="the dotprompt executable the project's .venv links to")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "editors" / "neovim-diagnostic.png")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "shop"
        folder.mkdir()
        _project(folder, args.dotprompt.resolve())
        screen = capture(folder)
        page = Path(tmp) / "screen.html"
        page.write_text(ansi_to_html(screen))
        width, height = COLUMNS * 9 + 24, int(ROWS * 15 * 1.35) + 26
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--window-size={width},{height}", f"--screenshot={args.out}", page.as_uri()],
                       check=True, capture_output=True)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
