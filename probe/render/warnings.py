"""Warnings as text: one sentence per `WarningCode`, filled from the warning's params.

The only place a warning's wording lives. Producers record a code and params; front ends print `warning_text`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from warp_compile.probe.compare_models import CLOCK_TITLES
from warp_compile.probe.models import Warn, WarningCode

_SETUP = {
    "warp_version": "on different Warp versions",
    "python": "on different Python interpreters",
    "machine": "on different machines",
    "platform": "on different platforms",
    "tool_version": "by different warp-compile versions",
}


def _samples_failed(p: dict[str, Any]) -> str:
    each = "; ".join(f"sample {f['sample']}: {f['failure']}" for f in p.get("failures", []))
    return f"{p['failed']} of {p['samples']} samples failed and are excluded from the statistics: {each}"


def _few_samples(p: dict[str, Any]) -> str:
    n = p["n"]
    return f"{p['side']} has only {n} successful sample{'s' if n != 1 else ''}: its MAD, and so the band, is weak"


def _tentative(p: dict[str, Any]) -> str:
    clocks = ", ".join(CLOCK_TITLES.get(c, c) for c in p["clocks"])
    return (
        f"tentative: the medians put {clocks} beyond the band, but the 95% bootstrap interval of the difference "
        "still reaches inside it; more pairs, or --until-decided, would settle it"
    )


def _no_source_scan(p: dict[str, Any]) -> str:
    if p.get("cwd") is not None:
        return (
            f"no source scan: the report's cwd {p['cwd']} is not a directory inside the allowed roots, so "
            "locations come from the measurement only"
        )
    return "no source scan: locations come from the measurement only"


_TEXT: dict[WarningCode, Callable[[dict[str, Any]], str]] = {
    WarningCode.SAMPLES_FAILED: _samples_failed,
    WarningCode.HOOK_NOT_STARTED: lambda p: (
        "the hook did not start in the measured process (python -I/-S, a non-Python command, or an "
        "interpreter that ignores PYTHONPATH); builds were not recorded"
    ),
    WarningCode.WARP_NOT_IMPORTED: lambda p: "no Warp compilation observed: the command never imported warp",
    WarningCode.NO_MODULE_LOADED: lambda p: "no Warp compilation observed: warp was imported but no module was loaded",
    WarningCode.LOG_FALLBACK: lambda p: (
        "Warp's loader could not be wrapped in this version; builds were parsed from its debug log"
    ),
    WarningCode.HOOK_ERROR: lambda p: f"hook error (recorded, not raised): {p['error']}",
    WarningCode.LAUNCHES_TRUNCATED: lambda p: f"launch list truncated: {p['recorded']} of {p['total']} recorded",
    WarningCode.CACHE_DIR_OUTSIDE: lambda p: (
        f"the app set its own kernel cache directory ({p['path']}), outside the sandbox's private "
        "cache: the cold run may have reused builds from earlier runs and the warm run may not see this one's"
    ),
    WarningCode.WARM_RECOMPILED: lambda p: (
        f"the warm re-run compiled {p['modules']} module(s) again: the cache is not reused between runs"
    ),
    WarningCode.COLD_WALL_VARIES: lambda p: (
        "cold wall times vary by more than 50% between samples: the machine may be busy"
    ),
    WarningCode.DIFFERENT_COMMANDS: lambda p: (
        f"the reports ran different commands: {' '.join(p['before'])!r} vs {' '.join(p['after'])!r}"
    ),
    WarningCode.DIFFERENT_SETUP: lambda p: f"measured {_SETUP[p['field']]}: {p['before']} vs {p['after']}",
    WarningCode.BEFORE_SAMPLES_FAILED: lambda p: (
        f"{p['failed']} of {p['samples']} BEFORE samples failed; its clocks are over the rest"
    ),
    WarningCode.FEW_SAMPLES: _few_samples,
    WarningCode.CACHE_LEFT_SANDBOX: lambda p: (
        f"the {p['side']} app pointed kernel_cache_dir outside the sandbox: its cold runs may have reused a cache"
    ),
    WarningCode.HOOK_ERRORS: lambda p: f"the {p['side']} hook reported {p['count']} internal error(s): {p['first']}",
    WarningCode.HOOK_MODES_DIFFER: lambda p: f"the hooks ran in different modes: {p['before']} vs {p['after']}",
    WarningCode.LAUNCH_PREFIX_CHECKED: lambda p: (
        f"launch list truncated: checked the first {p['checked']:,} of {p['total']:,} launches, totals equal"
    ),
    WarningCode.BEFORE_BUILD_ERRORS: lambda p: (
        f"the BEFORE run had {p['count']} build error(s) (first: module {p['module']})"
    ),
    WarningCode.NOT_SETTLED: lambda p: (
        f"--until-decided stopped at {p['pairs']} pairs before the verdict settled; more pairs could still change it"
    ),
    WarningCode.TENTATIVE: _tentative,
    WarningCode.SETTLED_DIFFERS: lambda p: (
        f"the bootstrap intervals settled on {p['settled']} but the medians against the bands say {p['verdict']}"
    ),
    WarningCode.RULE_SKIPPED: lambda p: f"rule {p['rule']} skipped: {p['why']}",
    WarningCode.RULE_FAILED: lambda p: f"rule {p['rule']} ({p['mechanism']}) failed: {p['error']}",
    WarningCode.NO_SOURCE_SCAN: _no_source_scan,
    WarningCode.TEXT: lambda p: str(p.get("text", "")),
}


def warning_text(w: Warn) -> str:
    """The sentence for one warning; params a renderer does not know (an older or hand-made file) never raise."""
    try:
        return _TEXT[w.code](w.params)
    except (KeyError, TypeError, ValueError):
        shown = ", ".join(f"{k}={v!r}" for k, v in w.params.items())
        return f"{w.code.value}" + (f" ({shown})" if shown else "")
