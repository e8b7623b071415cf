"""What a validation returns (the models live in intelliperf.models, the bottom layer, because
reports carry them; the validators name them from here)."""

from intelliperf.models import Difference, Problem, ProblemKind, Speedup, Verdict

__all__ = ["Difference", "Problem", "ProblemKind", "Speedup", "Verdict"]
