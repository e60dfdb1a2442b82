"""Path assertion types: one `@path_assertion` registration makes a type usable, linted and suggested."""

from __future__ import annotations

import pytest

from dotprompt.lint.check import check_library
from dotprompt.testing import TestFileError, load_test_file
from dotprompt.testing.assertions import PATH_ASSERTIONS, ExpectedValueError, path_assertion, path_assertion_names
from dotprompt.testing.expect import Observed, check

PROMPT = "---\noutput:\n  schema:\n    answer: string\n---\nx"


def _prefix(expected) -> None:
    if not isinstance(expected, str):
        raise ExpectedValueError(f"starts_with takes a string, not {expected!r}", "quote it")


@pytest.fixture
def starts_with():
    """A new assertion type, registered once for the test (and unregistered after it)."""
    path_assertion("starts_with", check_expected=_prefix)(lambda value, expected: str(value).startswith(expected))
    yield
    del PATH_ASSERTIONS["starts_with"]


def _seen(output) -> Observed:
    return Observed(output=output, text="", tool_calls=[], turns=1, repairs=[], latency_ms=0.0, tokens=0)


def test_a_registered_assertion_is_read_and_run(folder, starts_with):
    folder.write("p.prompt", PROMPT)
    test_file = folder.write("p.test.yaml", "cases:\n  - name: a\n    expect:\n      paths:\n"
                                            "        - {path: $.answer, starts_with: 'ye'}\n")
    [case] = load_test_file(test_file, folder.path)
    assert check(case.expect, _seen({"answer": "yes"}), timed=False) == []
    assert check(case.expect, _seen({"answer": "no"}), timed=False) == ['$.answer: expected starts_with "ye", got "no"']


def test_a_registered_assertion_is_suggested_and_its_value_linted(folder, starts_with):
    assert "starts_with" in path_assertion_names()
    folder.write("p.prompt", PROMPT)
    typo = folder.write("typo.test.yaml", "prompt: p\ncases:\n  - name: a\n    expect:\n      paths:\n"
                                          "        - {path: $.answer, starts_wit: 'ye'}\n")
    with pytest.raises(TestFileError, match="did you mean `starts_with`") as caught:
        load_test_file(typo, folder.path)
    assert "takes exactly one of equals, contains, matches, length, gte, lte, type, one_of, starts_with" in str(caught.value)
    typo.unlink()
    folder.write("p.test.yaml", "cases:\n  - name: a\n    expect:\n      paths:\n        - {path: $.answer, starts_with: 5}\n")
    found = [d.format() for d in check_library(folder.library(), jobs=1)]
    assert found == [f"{folder.path}/p.test.yaml:5:11: error: case 'a': starts_with takes a string, not 5 (quote it)  "
                     "[invalid-test-file]"]


def test_unregistered_names_are_unknown():
    assert "starts_with" not in PATH_ASSERTIONS
    assert path_assertion_names() == ("equals", "contains", "matches", "length", "gte", "lte", "type", "one_of")


def test_max_cost_passes_within_fails_over_and_fails_when_the_cost_is_unknown(folder):
    from decimal import Decimal

    from dotprompt.observe.cost import Cost

    folder.write("p.prompt", PROMPT)
    test_file = folder.write("p.test.yaml", "cases:\n  - name: a\n    expect:\n      max_cost: 0.01\n")
    [case] = load_test_file(test_file, folder.path)
    assert case.expect.max_cost == 0.01

    def seen(cost):
        return Observed(output={"answer": "x"}, text="", tool_calls=[], turns=1, repairs=[], latency_ms=0.0, tokens=0,
                        cost=cost)

    assert check(case.expect, seen(Cost(Decimal("0.0099"), calls=1)), timed=False) == []
    assert check(case.expect, seen(Cost(Decimal("0.0125"), calls=2)), timed=False) == [
        "cost $0.0125 is over the max_cost budget of $0.01"]
    reason = "no price for local/smollm2: not a hosted provider's model"
    assert check(case.expect, seen(Cost(None, reason)), timed=False) == [f"max_cost 0.01 USD cannot be checked: {reason}"]


@pytest.mark.parametrize("value", ["cheap", -1, True, "1e999", "[0.1]"])
def test_a_max_cost_that_is_not_a_number_of_dollars_is_a_file_error_at_its_line(folder, value):
    folder.write("p.prompt", PROMPT)
    test_file = folder.write("p.test.yaml", f"cases:\n  - name: a\n    expect:\n      max_cost: {value}\n")
    with pytest.raises(TestFileError) as caught:
        load_test_file(test_file, folder.path)
    assert "p.test.yaml:4" in str(caught.value) and "`max_cost` must be a number of US dollars" in str(caught.value)
