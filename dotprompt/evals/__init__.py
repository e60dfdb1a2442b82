"""Field-level evals of extraction prompts on gold datasets: scorers, alignment, metrics, gates, reports.

The names below load on first use, so that reading an `eval:` section (`dotprompt check` does) brings
none of the eval runner; type checkers read them from the `TYPE_CHECKING` block.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._util.lazy import lazy_names

_LAZY = {"DatasetError": "..errors",
         "Comparer": ".compare", "Comparison": ".compare", "FieldResult": ".compare",
         "EvalSpec": ".config", "FieldRule": ".config", "load_eval": ".config",
         "GoldRow": ".datasets", "read_dataset": ".datasets",
         "Counts": ".metrics", "Scores": ".metrics", "score_rows": ".metrics",
         "Arm": ".run", "ArmResult": ".run", "EvalRun": ".run",
         "SCORERS": ".scorers", "scorer": ".scorers",
         "EvalOptions": ".suite", "EvalOutcome": ".suite", "run_evals": ".suite"}

__all__ = ["SCORERS", "Arm", "ArmResult", "Comparer", "Comparison", "Counts", "DatasetError", "EvalOptions", "EvalOutcome",
           "EvalRun", "EvalSpec", "FieldResult", "FieldRule", "GoldRow", "Scores", "load_eval", "read_dataset", "run_evals",
           "score_rows", "scorer"]

if TYPE_CHECKING:
    from ..errors import DatasetError
    from .compare import Comparer, Comparison, FieldResult
    from .config import EvalSpec, FieldRule, load_eval
    from .datasets import GoldRow, read_dataset
    from .metrics import Counts, Scores, score_rows
    from .run import Arm, ArmResult, EvalRun
    from .scorers import SCORERS, scorer
    from .suite import EvalOptions, EvalOutcome, run_evals


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals(), __all__)
