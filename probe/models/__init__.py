"""The schema in one place: the Report (`measure`), the Comparison (`compare`, `try`), the Diagnosis (`diagnose`),
the FixResult (`fix`) and the static scan facts, over one pydantic base.

The report's names stay importable from here (`warp_compile.probe.models.Report`), as outside code uses them; the
other schemas are re-exported too, so `from warp_compile.probe.models import Comparison` works as well.
"""

from .comparison import Comparison  # noqa: E402,F401
from .diagnosis import Diagnosis, Finding  # noqa: E402,F401
from .fix import FixResult  # noqa: E402,F401
from .report import *  # noqa: F403
from .scan import ScanFacts  # noqa: E402,F401
