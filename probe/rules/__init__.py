"""The diagnosis rules, one module per mechanism, each exposing `MECHANISM = "CS-n"` and `evaluate(ctx) -> RuleResult`.

`RULES` lists them by module name in mechanism order. The list is the registry: `diagnose` imports each entry and
tolerates one that is not there yet (rules are written in parallel), so adding a mechanism is one line here plus
its module.
"""

from __future__ import annotations

import importlib
from types import ModuleType

RULES: list[str] = [
    "late_kernels",  # CS-1
    "cache_reuse",  # CS-2
    "late_options",  # CS-3
    "module_granularity",  # CS-4
    "block_dims",  # CS-5
    "late_overloads",  # CS-6
    "mathdx_lto",  # CS-7
    "cpu_parallel_load",  # CS-8
    "unique_modules",  # CS-9
    "unused_backward",  # CS-10
    "unroll_budget",  # CS-11
    "precompiled_header",  # CS-12
    "serial_modules",  # CS-13
    "per_call",  # WC-1 (this project's own: a cost paid at every call)
]


def load_rules(names: list[str] | None = None) -> tuple[list[ModuleType], dict[str, str]]:
    """(rule modules that import and look like rules, {name: why it was skipped}).

    A rule that is missing, fails to import or lacks MECHANISM/evaluate is skipped with a reason instead of taking
    the whole diagnosis down: one unfinished rule should cost one mechanism, not the report.
    """
    loaded: list[ModuleType] = []
    skipped: dict[str, str] = {}
    for name in RULES if names is None else names:
        full = f"{__name__}.{name}"
        try:
            mod = importlib.import_module(full)
        except ModuleNotFoundError as exc:
            skipped[name] = "not installed" if exc.name == full else f"import failed: {exc}"
            continue
        except Exception as exc:  # a broken rule must not break diagnose
            skipped[name] = f"import failed: {type(exc).__name__}: {exc}"
            continue
        if not isinstance(getattr(mod, "MECHANISM", None), str) or not callable(getattr(mod, "evaluate", None)):
            skipped[name] = "not a rule (needs MECHANISM and evaluate)"
            continue
        loaded.append(mod)
    return loaded, skipped
