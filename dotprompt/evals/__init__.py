"""Field-level evals of extraction prompts on gold datasets: scorers, alignment, metrics, gates, reports."""

from ..errors import DatasetError
from .compare import Comparer, Comparison, FieldResult
from .config import EvalSpec, FieldRule, load_eval
from .datasets import GoldRow, read_dataset
from .metrics import Counts, Scores, score_rows
from .run import Arm, ArmResult, EvalRun
from .scorers import SCORERS, scorer

__all__ = ["SCORERS", "Arm", "ArmResult", "Comparer", "Comparison", "Counts", "DatasetError", "EvalRun", "EvalSpec",
           "FieldResult", "FieldRule", "GoldRow", "Scores", "load_eval", "read_dataset", "score_rows", "scorer"]
