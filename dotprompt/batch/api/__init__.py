"""The providers' own batch endpoints (`dotprompt run NAME --input-file rows.jsonl --batch-api`).

`capture` turns a rendered row into the very request a live call would send, and replays a
downloaded result through the same generate loop (format parsing, schema validation, repairs);
`openai`, `anthropic` and `gemini` know each provider's batch file, job and result shapes; `jobs`
submits, keeps the state file beside the output and, on `--resume`, polls and downloads.
"""

__all__: list[str] = []  # the modules of this package are its API; nothing is re-exported here
