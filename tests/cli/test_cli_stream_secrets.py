"""`dotprompt run --stream` shows the reply as it comes: a key the model repeats is masked there even
when it arrives split across chunks (the view holds back an end that could begin a secret)."""

from __future__ import annotations

import pytest

from dotprompt.cli.progress import StreamView
from tests.cli_inprocess import cli

KEY = "sk-test-Zq81-SPLIT-secret-value"
TEXT = f"the key is {KEY} and the proxy https://bob:hunter2hunter2@proxy.example/x, then more"


def shown(pieces: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with StreamView("streaming t") as view:
        for piece in pieces:
            view.add(piece)
    return capsys.readouterr().err


def test_a_key_split_at_any_two_points_never_shows(monkeypatch, capsys):
    monkeypatch.setenv("SOME_API_KEY", KEY)
    start, end = TEXT.index(KEY) - 2, TEXT.index("@proxy") + 2
    for first in range(start, end, 3):
        for second in range(first + 1, end + 1, 4):
            err = shown([TEXT[:first], TEXT[first:second], TEXT[second:]], capsys)
            assert KEY not in err and "hunter2" not in err, (first, second, err)
            # Nothing else is lost or reordered: the text is the masked reply, whole.
            assert err == "the key is *** and the proxy https://***@proxy.example/x, then more\n", (first, second)


def test_text_that_only_begins_like_a_key_is_shown_once_the_next_piece_says_so(monkeypatch, capsys):
    monkeypatch.setenv("SOME_API_KEY", KEY)
    assert shown(["price sk-", "test is not a key"], capsys) == "price sk-test is not a key\n"


def test_the_streamed_view_of_a_run_masks_a_key_the_model_repeats(tmp_path, cli_env):
    (tmp_path / "greet.prompt").write_text(
        '---\ninput:\n  schema:\n    name: string\n---\n{{ role("user") }}Hello {{ name }}, bye')
    # The echo model streams its reply in 16-character pieces: the 31-character key is cut at least once.
    done = cli("run", "greet", "--dir", str(tmp_path), "--model", "echo", "--stream",
               "--input", f'{{"name": "{KEY}"}}', env={**cli_env, "SOME_API_KEY": KEY})
    assert done.returncode == 0, done.stderr
    assert KEY not in done.stderr and "Hello ***, bye" in done.stderr
