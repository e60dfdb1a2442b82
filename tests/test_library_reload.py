"""Hot reload under hostile editing (issue class 10): in-place rewrites, unlink-then-create saves, edits
that keep size and mtime, Handlebars partial edits, caches that grow per edit.

Each attempt runs in a child process with a time and memory limit (`isolation`). Every version of a
file carries its number twice, in the frontmatter config and in the body, and the body is padded,
so a render of a torn file (config of one version, body of another or cut short) is caught.
"""

from __future__ import annotations

import pytest

from tests.isolation import assert_finishes

PRELUDE = """
import json, os, sys, threading, time
from pathlib import Path
from dotprompt import PromptLibrary

root = Path("hostile_prompts")  # the child runs in a fresh temporary folder
root.mkdir(exist_ok=True)
PAD = "x" * 3000

def version(n, engine="jinja2"):
    head = f"---\\nconfig:\\n  version: {n}\\n"
    if engine == "handlebars":
        head += "dotprompt.engine: handlebars\\n"
    return head + f"---\\nbody {n} {PAD} end {n}\\n"

def text(rendered):
    return "".join(p.text or "" for m in rendered.messages for p in m.content)

def whole(rendered):
    n = rendered.config.get("version")
    return text(rendered).strip() == f"body {n} {PAD} end {n}"
"""


def hammer(tmp_path, writer: str, engine: str = "jinja2") -> dict:
    code = PRELUDE + f"""
ENGINE = {engine!r}
path = root / "p.prompt"
path.write_text(version(0, ENGINE), encoding="utf-8")
lib = PromptLibrary(root)
prompt = lib.load("p")
assert whole(prompt.render())
stop = threading.Event()
errors, torn, renders, seen = [], [], [0], set()
lock = threading.Lock()

def render_loop():
    while not stop.is_set():
        try:
            out = lib.load("p").render()
            ok = whole(out)
            with lock:
                renders[0] += 1
                seen.add(out.config.get("version"))
                if not ok:
                    torn.append(text(out)[:80])
        except Exception as exc:
            with lock:
                errors.append(f"{{type(exc).__name__}}: {{exc}}"[:300])

{writer}

import multiprocessing
# The editor is another process (as editors are): forked before the render threads start.
writer = multiprocessing.get_context("fork").Process(target=lambda: Path("written").write_text(str(write_versions(2.0))))
writer.start()
threads = [threading.Thread(target=render_loop) for _ in range(8)]
for t in threads:
    t.start()
writer.join()
written = int(Path("written").read_text())
stop.set()
for t in threads:
    t.join()
final = lib.load("p").render()
print(json.dumps({{"errors": len(errors), "first_errors": errors[:5], "torn": len(torn), "first_torn": torn[:3],
                  "renders": renders[0], "final_ok": whole(final), "final": final.config.get("version"),
                  "written": written}}))
"""
    return assert_finishes(code, timeout=60, cwd=tmp_path).json()


IN_PLACE = """
def write_versions(seconds):
    n, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        n += 1
        data = version(n, ENGINE).encode()
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)   # the editor truncates, then writes in pieces
        try:
            for i in range(0, len(data), 700):
                os.write(fd, data[i:i + 700])
        finally:
            os.close(fd)
        time.sleep(0.002)
    return n
"""

UNLINK_CREATE = """
def write_versions(seconds):
    n, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        n += 1
        os.unlink(path)                                  # the editor removes the file, then creates it anew
        with open(path, "w", encoding="utf-8") as handle:
            data = version(n, ENGINE)
            handle.write(data[:500]); handle.flush()
            handle.write(data[500:])
        time.sleep(0.002)
    return n
"""


IN_PLACE_HALVES = """
def write_versions(seconds):
    n, end = 1000, time.monotonic() + seconds
    while time.monotonic() < end:
        n += 1                                           # four digits: every version has the same size
        data = version(n, ENGINE).encode()
        fd = os.open(path, os.O_WRONLY)                  # written over in place, no truncation: size, inode and
        try:                                             # (on a coarse clock) mtime stay as they were
            half = len(data) // 2
            os.pwrite(fd, data[:half], 0)
            time.sleep(0.0005)
            os.pwrite(fd, data[half:], half)
        finally:
            os.close(fd)
        time.sleep(0.002)
    return n
"""


def check(result: dict) -> None:
    assert result["errors"] == 0, result
    assert result["torn"] == 0, result
    assert result["renders"] > 0, result
    assert result["final_ok"] and result["final"] == result["written"], result


@pytest.mark.slow
def test_in_place_rewrites_never_tear_a_render(tmp_path):
    check(hammer(tmp_path, IN_PLACE))


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["jinja2", "handlebars"])
def test_same_size_rewrites_in_two_halves_never_tear_a_render(tmp_path, engine):
    check(hammer(tmp_path, IN_PLACE_HALVES, engine))


@pytest.mark.slow
def test_unlink_then_create_saves_never_raise(tmp_path):
    check(hammer(tmp_path, UNLINK_CREATE))


@pytest.mark.slow
def test_in_place_rewrites_of_a_handlebars_prompt(tmp_path):
    check(hammer(tmp_path, IN_PLACE, "handlebars"))


def test_a_save_stalled_half_way_is_not_served_once_its_timestamps_look_settled(tmp_path):
    # An editor writes in place: truncates, writes half, stalls (a loaded machine, a slow disk), writes the
    # rest. The reader looks only once the half-written file's timestamps are older than the settle time,
    # so the timestamps alone call it settled; a second read a settle time later must see it move on.
    code = PRELUDE + """
from dotprompt.document import files
files.RELOAD_SETTLE_SECONDS = 0.3  # wide margins: the timing below holds on a loaded machine
path = root / "p.prompt"
path.write_text(version(1000), encoding="utf-8")
lib = PromptLibrary(root)
prompt = lib.load("p")
assert whole(prompt.render())
time.sleep(0.4)
signal_read, signal_write = os.pipe()

def editor():
    data = version(1001).encode()
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    os.write(fd, data[:len(data) // 2])
    os.write(signal_write, b"h")  # half written
    time.sleep(0.45)
    os.write(fd, data[len(data) // 2:])
    os.close(fd)

import multiprocessing
writer = multiprocessing.get_context("fork").Process(target=editor)
writer.start()
os.read(signal_read, 1)
time.sleep(0.35)  # past the settle time: by its timestamps, the half-written file has settled
during = prompt.render()
writer.join()
after = prompt.render()
print(json.dumps({"whole": whole(during), "version": during.config.get("version"), "text": text(during)[-40:],
                  "after_whole": whole(after), "after": after.config.get("version")}))
"""
    result = assert_finishes(code, timeout=60, cwd=tmp_path).json()
    assert result["whole"] and result["version"] in (1000, 1001), result
    assert result["after_whole"] and result["after"] == 1001, result


def test_a_save_stalled_after_truncating_is_never_served_as_an_empty_version(tmp_path):
    # An editor writes in place: truncates, then stalls (a loaded machine) longer than the grace before it
    # writes. The empty file holds still, so its timestamps call it settled and old enough; it must not
    # become the version renders see (it compiles, to no messages, since an empty file is valid).
    code = PRELUDE + """
path = root / "p.prompt"
path.write_text(version(1000), encoding="utf-8")
lib = PromptLibrary(root)
prompt = lib.load("p")
assert whole(prompt.render())
time.sleep(0.2)
signal_read, signal_write = os.pipe()

def editor():
    data = version(1001).encode()
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    os.write(signal_write, b"t")  # truncated
    time.sleep(1.5)  # three times the grace
    os.write(fd, data)
    os.close(fd)

import multiprocessing
writer = multiprocessing.get_context("fork").Process(target=editor)
writer.start()
os.read(signal_read, 1)
during = [prompt.render()]  # sees the empty file first
time.sleep(0.7)  # past the grace: by its timestamps, the empty file is old and settled
during.append(prompt.render())
writer.join()
after = prompt.render()
print(json.dumps({"during": [[whole(r), r.config.get("version"), text(r)[-20:]] for r in during],
                  "after_whole": whole(after), "after": after.config.get("version")}))
"""
    result = assert_finishes(code, timeout=60, cwd=tmp_path).json()
    assert all(ok and n == 1000 for ok, n, _ in result["during"]), result
    assert result["after_whole"] and result["after"] == 1001, result


def test_a_file_emptied_on_purpose_is_served_once_it_has_stayed_empty(tmp_path):
    code = PRELUDE + """
from dotprompt.prompts import store
store.RELOAD_EMPTIED_SECONDS = 0.6  # read at the call
path = root / "p.prompt"
path.write_text(version(1), encoding="utf-8")
lib = PromptLibrary(root)
prompt = lib.load("p")
assert whole(prompt.render())
path.write_bytes(b"")
first = prompt.render()
time.sleep(0.9)
later = prompt.render()
print(json.dumps({"first": [whole(first), first.config.get("version")], "later": len(later.messages)}))
"""
    result = assert_finishes(code, timeout=60, cwd=tmp_path).json()
    assert result == {"first": [True, 1], "later": 0}


def test_a_file_empty_from_the_start_reloads_at_once(tmp_path):
    # Only a file that had content is held back when it turns blank: blank to another blank is a new
    # version at the next render (its identity says which), and blank to content too.
    code = PRELUDE + """
path = root / "p.prompt"
path.write_bytes(b"")
lib = PromptLibrary(root)
prompt = lib.load("p")
empty = len(prompt.render().messages)
before = prompt.identity.hash
path.write_bytes(b"\\n")  # still blank, another version
again = prompt.render()
path.write_text(version(2), encoding="utf-8")
print(json.dumps({"empty": empty, "again": len(again.messages), "new_version": prompt.identity.hash != before
                  and again.identity.hash != before, "filled": whole(prompt.render())}))
"""
    result = assert_finishes(code, timeout=60, cwd=tmp_path).json()
    assert result == {"empty": 0, "again": 0, "new_version": True, "filled": True}


def test_an_edit_keeping_size_and_mtime_is_seen(tmp_path):
    code = PRELUDE + """
path = root / "p.prompt"
path.write_text("---\\nconfig: {version: 1}\\n---\\nversion one\\n", encoding="utf-8")
lib = PromptLibrary(root)
prompt = lib.load("p")
first = text(prompt.render())
st = path.stat()
path.write_text("---\\nconfig: {version: 2}\\n---\\nversion two\\n", encoding="utf-8")
os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))           # same size, same mtime
assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
second = prompt.render()
print(json.dumps({"first": first, "second": text(second), "config": second.config}))
"""
    result = assert_finishes(code, timeout=30, cwd=tmp_path).json()
    assert result["first"].strip() == "version one"
    assert result["second"].strip() == "version two" and result["config"] == {"version": 2}


def test_handlebars_partial_edits_are_picked_up(tmp_path):
    code = PRELUDE + """
partial = root / "_p.prompt"
partial.write_text("partial one", encoding="utf-8")
(root / "x.prompt").write_text("---\\ndotprompt.engine: handlebars\\n---\\n[{{> p}}]", encoding="utf-8")
lib = PromptLibrary(root)
prompt = lib.load("x")
first = text(prompt.render())
before = partial.stat().st_mtime_ns
partial.write_text("partial two", encoding="utf-8")
os.utime(partial, ns=(before + 5_000_000, before + 5_000_000))
second = text(prompt.render())
print(json.dumps({"first": first, "second": second}))
"""
    result = assert_finishes(code, timeout=30, cwd=tmp_path).json()
    assert result == {"first": "[partial one]", "second": "[partial two]"}


@pytest.mark.slow
def test_partial_caches_stay_bounded_over_many_edits(tmp_path):
    code = PRELUDE + """
jp, hp = root / "_j.prompt", root / "_h.prompt"
jp.write_text("j0", encoding="utf-8"); hp.write_text("h0", encoding="utf-8")
(root / "j.prompt").write_text("{% include 'j' %}", encoding="utf-8")
(root / "h.prompt").write_text("---\\ndotprompt.engine: handlebars\\n---\\n{{> h}}", encoding="utf-8")
lib = PromptLibrary(root)
j, h = lib.load("j"), lib.load("h")
for i in range(1, 600):
    for path, prefix in ((jp, "j"), (hp, "h")):
        before = path.stat().st_mtime_ns
        path.write_text(f"{prefix}{i}", encoding="utf-8")
        os.utime(path, ns=(before + 1_000_000, before + 1_000_000))
    assert text(j.render()) == f"j{i}", text(j.render())
    assert text(h.render()) == f"h{i}", text(h.render())
print(json.dumps(lib.cache_info()))
"""
    result = assert_finishes(code, timeout=120, cwd=tmp_path).json()
    assert all(size <= 16 for size in result.values()), result
