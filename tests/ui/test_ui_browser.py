"""The workbench in a real browser (Debian's chromium, headless, driven by Playwright).

One project and one `dotprompt ui` for the module, its model a scripted OpenAI-compatible server on
loopback. The flows are a person's: open a prompt, fill the form, render, run (a streamed reply, a
tool call, an interrupt approved), open the run, open an eval diff. A failed test leaves a
screenshot in test-artifacts/ui/.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.ui.scripted_openai import FINAL, HOSTILE_REPLY, scripted_server
from tests.ui.workbench_project import KEY, docs_shot, environment, make_project, running_ui

pytestmark = pytest.mark.slow  # child processes, a browser or a real server: the full run, not the fast loop


@pytest.fixture(scope="module")
def workbench(tmp_path_factory) -> tuple[str, Path]:
    root = make_project(tmp_path_factory.mktemp("workbench"))
    with scripted_server(chunks=30, delay=0.04, call_pieces=5) as base, running_ui(root, environment(base, root)) as url:
        yield url, root


def ready(page) -> None:
    page.wait_for_selector("#view[data-testid=ready]")


def open_route(page, url: str, route: str) -> None:
    page.goto(url + route)
    ready(page)


def test_the_prompt_list_shows_the_tree_with_variants_partials_and_check_diagnostics(page, workbench):
    url, _ = workbench
    open_route(page, url, "#/")
    page.wait_for_selector("#check-summary:has-text('1 error(s)')")
    names = page.locator("li.prompt").evaluate_all("items => items.map(i => i.getAttribute('data-name'))")
    assert names[:3] == ["broken", "order", "billing/note"] or set(names) == {"broken", "order", "billing/note"}
    order = page.locator("li.prompt[data-name=order]")
    assert order.locator("ul.variants a").inner_text() == ".short"
    assert page.locator("li.partial").inner_text().startswith("partial")
    problem = page.locator("li.prompt[data-name=broken] li.diagnostic.error").inner_text()
    assert problem.startswith("broken.prompt:6 error:") and "`txt`" in problem
    docs_shot(page, "prompts")


def test_open_a_prompt_fill_its_form_and_render_exactly_what_render_json_gives(page, workbench):
    url, root = workbench
    open_route(page, url, "#/")
    page.click("li.prompt[data-name=order] > a")
    ready(page)
    assert page.locator("#engine").inner_text() == "jinja2"
    assert page.locator("#field-reason").evaluate("s => s.options[s.selectedIndex].text") == '"late"'  # the default
    page.fill("#field-order_id", "A7")
    page.select_option("#field-reason", label='"damaged"')
    page.fill("#field-amount", "12")
    page.click("#render")
    page.wait_for_selector("#messages .message.user")
    assert page.locator("#messages .message.user pre").inner_text().strip() == "Order A7: refund because damaged (12)."
    shown = json.loads(page.locator("#render-json").text_content())
    cli = subprocess.run([sys.executable, "-m", "dotprompt.cli", "render", "order", "--json", "--input",
                          json.dumps({"order_id": "A7", "reason": "damaged", "amount": 12})],
                         cwd=root, capture_output=True, text=True, timeout=60, env=environment("http://127.0.0.1:9/v1", root))
    assert shown == json.loads(cli.stdout)
    wire = json.loads(page.locator("#wire details[data-name='openai/gpt-test'] pre").text_content())
    assert wire["model"] == "gpt-test" and wire["messages"][-1]["content"].strip() == "Order A7: refund because damaged (12)."
    assert page.locator("#wire details").count() == 4  # the prompt's model and one per previewed provider
    page.locator("#wire details[data-name='anthropic/claude-sonnet-4-5'] summary").click()
    docs_shot(page, "prompt-render")
    page.click("#tab-json")
    assert json.loads(page.input_value("#input-json")) == {"order_id": "A7", "reason": "damaged", "amount": 12,
                                                           "urgent": False}


def test_run_streams_the_reply_shows_the_tool_call_and_resumes_an_approved_interrupt(page, workbench):
    url, _ = workbench
    open_route(page, url, "#/prompt/order")
    page.fill("#field-order_id", "A1")
    page.click("#run")
    page.wait_for_selector("#interrupts .interrupt[data-name=approve_refund]")
    assert "lookup_order" in page.locator(".turn.tool .tool-response").first.inner_text()
    assert '"delivered"' in page.locator(".turn.tool .tool-response").first.inner_text()
    assert "refund 5.0 on order A1?" in page.locator("#interrupts").inner_text()
    page.click("#interrupts .approve")
    # The final JSON streams in 30 pieces over ~1.2 s: the partial output is on the page before the end.
    page.wait_for_function("() => { const p = [...document.querySelectorAll('[data-role=partial-output]')]"
                           ".find(e => !e.hidden && e.textContent.includes('answer'));"
                           " return p && !document.getElementById('final-output'); }")
    page.wait_for_selector("#final-output")
    assert json.loads(page.locator("#final-output").text_content()) == FINAL
    assert page.locator("#validated").is_visible()
    assert "12 in, 7 out" in page.locator("#usage").last.inner_text()
    docs_shot(page, "prompt-run")


def test_a_hostile_reply_is_shown_as_text_and_runs_nothing(page, workbench):
    url, _ = workbench
    open_route(page, url, "#/prompt/order")
    page.fill("#field-order_id", "HOSTILE")
    page.click("#run")
    page.wait_for_selector("#interrupts .approve")
    page.click("#interrupts .approve")
    page.wait_for_selector("#final-output")
    assert json.loads(page.locator("#final-output").text_content()) == HOSTILE_REPLY
    assert page.locator("#run-output img, #run-output script, #run-output a").count() == 0
    assert page.title() == "dotprompt workbench" and page.dialogs == []


def test_open_a_run_from_the_log_and_replay_it_into_its_prompt(page, workbench):
    url, _ = workbench
    open_route(page, url, "#/runs")
    page.fill("#search", "refund approved")
    page.click("#filter")
    page.wait_for_selector("table.runs tbody tr")
    docs_shot(page, "runs")
    page.locator("table.runs tbody tr.ok a").first.click()
    ready(page)
    turns = page.locator("#run-turns").inner_text()
    assert "lookup_order" in turns and "approve_refund" in turns and "refund approved for order A1" in turns
    assert json.loads(page.locator("#run-output").text_content()) == FINAL
    docs_shot(page, "run")
    page.click("#replay")
    ready(page)
    assert page.input_value("#field-order_id") == "A1"


def test_open_an_eval_report_and_read_its_field_table_and_diff(page, workbench):
    url, _ = workbench
    open_route(page, url, "#/evals")
    page.click("#reports a")
    ready(page)
    header = page.locator("table.fields thead").inner_text()
    assert "base" in header and "fast" in header
    total = page.locator("table.fields tr[data-field=total]").inner_text()
    assert re.search(r"0\.500 \(1w 0m 0x\) -0\.250\s+1\.000", total), total
    wrong = page.locator("#diff tr.wrong")
    assert wrong.locator("pre.expected").inner_text() == "120.5"
    assert wrong.locator("pre.predicted").inner_text() == "<img src=x onerror=alert(1)>"
    assert page.locator("#report img").count() == 0 and page.dialogs == []
    docs_shot(page, "evals")


def test_the_page_follows_the_files(page, workbench):
    url, root = workbench
    open_route(page, url, "#/prompt/order?variant=short")
    assert "Refund. Be brief." in page.locator("#template").inner_text()
    target = root / "prompts" / "order.short.prompt"
    target.write_text(target.read_text().replace("Refund. Be brief.", "Refund, briefly, and kindly."))
    started = time.monotonic()
    page.wait_for_selector("#template:has-text('Refund, briefly, and kindly.')")
    assert time.monotonic() - started < 10 and page.errors == []


def start_run(page, body: dict) -> str:
    """A run started as the page starts one (its token, its fetch); its id."""
    return page.evaluate("""async (body) => {
        const { token } = await (await fetch('/api/session')).json();
        const answer = await fetch('/api/live', { method: 'POST', body: JSON.stringify(body),
            headers: { 'content-type': 'application/json', 'x-csrf-token': token } });
        return (await answer.json()).id;
    }""", body)


def test_a_streamed_tool_call_is_one_block_that_grows(page, workbench):
    # The scripted model streams each call's arguments in 5 pieces.
    url, _ = workbench
    open_route(page, url, "#/prompt/order")
    page.fill("#field-order_id", "A1")
    page.click("#run")
    page.wait_for_selector("#interrupts .interrupt[data-name=approve_refund]")
    calls = page.locator(".turn.model li.tool-request")
    assert calls.count() == 2, calls.all_inner_texts()
    texts = calls.all_inner_texts()
    assert "lookup_order" in texts[0] and '"order_id": "A1"' in texts[0]
    assert "approve_refund" in texts[1] and '"amount": 5' in texts[1]


def test_a_run_page_shows_no_stray_text(page, workbench):
    url, _ = workbench
    open_route(page, url, "#/prompt/billing/note")
    run = start_run(page, {"name": "billing/note", "input": {"text": "hi"}, "model": "openai/gpt-test"})
    page.wait_for_function("async (id) => (await (await fetch(`/api/live/${id}/events`)).text()).includes('event: end')",
                           arg=run)
    open_route(page, url, "#/runs")
    page.locator("table.runs tbody tr a").first.click()
    ready(page)
    stray = page.evaluate("() => [...document.getElementById('view').childNodes]"
                          ".filter(n => n.nodeType === Node.TEXT_NODE && n.textContent.trim()).map(n => n.textContent)")
    assert stray == []
    assert "null" not in page.locator("#view").inner_text().split()


def test_two_interrupts_in_one_turn_are_answered_together(page, workbench):
    url, _ = workbench
    open_route(page, url, "#/prompt/order")
    page.fill("#field-order_id", "TWICE")
    page.click("#run")
    page.wait_for_selector("#interrupts .interrupt >> nth=1")
    first, second = page.locator("#interrupts .interrupt").all()
    first.locator(".approve").click()
    # One answered, one still asked: both stay on the page, nothing is sent yet.
    assert page.locator("#interrupts .interrupt").count() == 2
    assert "1 of 2" in page.locator("#interrupts").inner_text()
    second.locator(".restart").click()
    page.wait_for_selector("#final-output")
    assert json.loads(page.locator("#final-output").text_content()) == FINAL
    assert page.locator("#view .error").count() == 0 and page.errors == []


def test_a_running_run_can_be_cancelled_from_the_page(page, workbench):
    url, _ = workbench
    open_route(page, url, "#/prompt/order")
    page.fill("#field-order_id", "A1")
    page.click("#run")
    page.click("#interrupts .approve")
    page.wait_for_selector("[data-role=partial-output]:not([hidden])")
    page.click("#cancel")
    page.wait_for_selector("#run-status:has-text('cancelled')")
    assert page.locator("#final-output").count() == 0 and page.locator("#cancel").count() == 0


def test_a_key_the_model_repeats_is_masked_in_the_page(page, workbench):
    url, _ = workbench
    open_route(page, url, "#/prompt/billing/note")
    page.fill("#field-text", "LEAK")
    page.fill("#model", "openai/gpt-test")
    page.click("#run")
    page.wait_for_selector("#final-output")
    shown = page.locator("#view").inner_text()
    assert "the key is ***" in shown and KEY[:8] not in shown
