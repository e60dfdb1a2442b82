"""Built-in middleware arguments in `use:` are checked at load, values as well as names: a negative
`max_retries` is a PromptFileError naming the file and the entry, never a bare AssertionError at run time."""

from __future__ import annotations

import pytest

from dotprompt import PromptFileError, UsageError
from dotprompt.generation.policies import retry, validate_and_retry
from dotprompt.lint.check import check_library


@pytest.mark.parametrize("arguments", ["{max_retries: -1}", "{max_retries: '3'}", "{max_retries: true}",
                                       "{initial_delay: -1}", "{backoff: -2}"])
def test_bad_retry_values_fail_at_load_and_in_check(folder, arguments):
    path = folder.write("p.prompt", f"---\nmodel: echo\nuse:\n  - retry: {arguments}\n---\nhi")
    with pytest.raises(PromptFileError) as failed:
        folder.library().load("p")
    assert failed.value.path == str(path) and "`use` entry 'retry'" in str(failed.value)
    assert any("`use` entry 'retry'" in d.message and d.level == "error" for d in check_library(folder.library()))


def test_good_values_still_load_and_run(folder):
    folder.write("p.prompt", "---\nmodel: echo\nuse:\n  - retry: {max_retries: 0}\n---\nhi")
    assert "hi" in folder.library().load("p").generate_sync({}).text


def test_the_classes_refuse_bad_values_too():
    with pytest.raises(UsageError, match="max_retries must be a whole number of 0 or more"):
        retry(max_retries=-1)
    with pytest.raises(UsageError, match="max_attempts"):
        validate_and_retry(max_attempts="2")  # type: ignore[arg-type]
