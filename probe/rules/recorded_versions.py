"""The versions a run made late, as the plan that makes them at import: for CS-1 and CS-6 findings whose kernels
the scan cannot place (renamed before decoration, built by a helper, registered inside a function).

The hook records every kernel and generic instance the app made, with the app's frames that made it and their
arguments (`Report.kernel_creations`). Those made after their module first loaded are the ones that rebuilt it;
the transformation layer picks the function whose call made them and writes that call at import
(`transform.memoize.made_at_import_from_run`).
"""

from __future__ import annotations

from ..models import KernelCreation
from ..transform.memoize import made_at_import_from_run
from ..transform.plan import Step
from .context import RuleContext
from .helpers import warp_key


def late_creations(ctx: RuleContext, module: str, keys: set[str] | None = None,
                   kind: str | None = None) -> list[KernelCreation]:
    """Kernels (or instances, `kind="overload"`) of `module` the run made after the module first loaded."""
    starts = [b.start_ms for b in ctx.report.builds if b.module == module and b.start_ms > 0]
    if not starts:
        return []
    first = min(starts)
    out = []
    for c in ctx.report.kernel_creations:
        if c.module != module or c.start_ms <= first or (kind is not None and c.made_by != kind):
            continue
        if keys is not None and c.key not in keys and warp_key(c.key) not in keys:
            continue
        out.append(c)
    return out


def versions_plan(ctx: RuleContext, module: str, keys: set[str] | None = None, kind: str | None = None) -> Step | None:
    """The step that makes at import what the run made late in `module`; None when the run recorded nothing late
    (an older report, or a hook without the record)."""
    late = late_creations(ctx, module, keys, kind)
    if not late or not ctx.sources.available:
        return None
    return made_at_import_from_run(ctx, late)
