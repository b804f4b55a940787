"""Compare two measurements: was the same work done, and was less (or sooner) compiled?

`equivalence` checks the launch structure and what was built, `verdict` judges the clocks (`compare`, pure),
`drift` estimates machine drift between two saved reports on their identical work (`compare_reports`) and applies
the CI gate (`apply_gate`), and `interleave` measures two source trees alternately. The text form is
`warp_compile.probe.render.comparison`; reports are read with `Report.load`.
"""

from .drift import apply_gate, compare_reports, estimate_drift
from .equivalence import check_equivalence, module_hash_rows
from .interleave import interleaved_compare
from .verdict import TIMING_FLOOR_MS, compare

__all__ = [
    "TIMING_FLOOR_MS", "apply_gate", "check_equivalence", "compare", "compare_reports", "estimate_drift",
    "interleaved_compare", "module_hash_rows",
]
