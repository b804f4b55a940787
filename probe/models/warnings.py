"""Warnings: the codes a measurement, a comparison or a diagnosis raises, and one sentence per code.

The only place a warning's wording lives, beside its code: the schema's `Warn.message` is that sentence, so every
reader of the JSON gets it. Producers record a code and params; front ends print `message`.
Most sentences are `str.format` templates over the params; the few that join lists or pick words are functions.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

from .clocks import CLOCK_TITLES


class WarningCode(str, Enum):
    """What a warning is about. Callers decide on the code; the text is rendered from code and params at the edge
    (below), so rewording a message never changes behaviour."""

    # measure (Report.warnings)
    SAMPLES_FAILED = "samples_failed"  # failed, samples, failures [{sample, failure}]
    HOOK_NOT_STARTED = "hook_not_started"
    WARP_NOT_IMPORTED = "warp_not_imported"
    WARP_MISSING = "warp_missing"  # hint: the interpreter could not import warp, and what to pass instead
    NO_MODULE_LOADED = "no_module_loaded"
    LOG_FALLBACK = "log_fallback"
    HOOK_ERROR = "hook_error"  # error
    LAUNCHES_TRUNCATED = "launches_truncated"  # recorded, total
    CACHE_DIR_OUTSIDE = "cache_dir_outside"  # path
    WARM_RECOMPILED = "warm_recompiled"  # modules
    COLD_WALL_VARIES = "cold_wall_varies"
    # compare (Comparison.warnings)
    DIFFERENT_COMMANDS = "different_commands"  # before, after
    DIFFERENT_SETUP = "different_setup"  # field (warp_version, python, machine, platform, tool_version), before, after
    BEFORE_SAMPLES_FAILED = "before_samples_failed"  # failed, samples
    FEW_SAMPLES = "few_samples"  # side, n
    CACHE_LEFT_SANDBOX = "cache_left_sandbox"  # side
    HOOK_ERRORS = "hook_errors"  # side, count, first
    HOOK_MODES_DIFFER = "hook_modes_differ"  # before, after
    LAUNCH_PREFIX_CHECKED = "launch_prefix_checked"  # checked, total
    BEFORE_BUILD_ERRORS = "before_build_errors"  # count, module
    NOT_SETTLED = "not_settled"  # pairs
    CONTENDED = "contended"  # share, side: other work held that share of the machine's CPU time during the runs
    TENTATIVE = "tentative"  # clocks
    SETTLED_DIFFERS = "settled_differs"  # settled, verdict
    EXPERIMENT_NOT_APPLIED = "experiment_not_applied"  # settings (the `try` settings that did not take)
    DRIFT_CORRECTED = "drift_corrected"  # factor, band, yardstick: saved reports judged on drift-corrected clocks
    DRIFT_UNCORRECTED = "drift_uncorrected"  # reason: no trustworthy drift estimate between two saved reports
    CACHE_DIR_OWN = "cache_dir_own"  # path: the app set its own kernel cache dir, inside the sandbox's temp root
    # server
    PYTHON_RESOLVED = "python_resolved"  # name, path, advice: a bare `python` in command[0] resolved on PATH
    # diagnose (Diagnosis.warnings)
    RULE_SKIPPED = "rule_skipped"  # rule, why
    RULE_FAILED = "rule_failed"  # rule, mechanism, error
    RULE_CLAIMS_FAILED = "rule_claims_failed"  # rule, error: it could not declare the rebuilds it explains
    NO_SOURCE_SCAN = "no_source_scan"  # cwd: set when the report's cwd was not a directory inside the allowed roots
    # a warning read from an older report that stored only its text
    TEXT = "text"  # text


C = WarningCode
_SETUP = {
    "warp_version": "on different Warp versions",
    "python": "on different Python interpreters",
    "machine": "on different machines",
    "platform": "on different platforms",
    "tool_version": "by different warp-compile versions",
}

_TEMPLATES: dict[WarningCode, str] = {
    C.HOOK_NOT_STARTED: "the hook did not start in the measured process (python -I/-S, a non-Python command, or an "
    "interpreter that ignores PYTHONPATH); builds were not recorded",
    C.WARP_NOT_IMPORTED: "no Warp compilation observed: the command never imported warp",
    C.WARP_MISSING: "{hint}",
    C.NO_MODULE_LOADED: "no Warp compilation observed: warp was imported but no module was loaded",
    C.LOG_FALLBACK: "Warp's loader could not be wrapped in this version; builds were parsed from its debug log",
    C.HOOK_ERROR: "hook error (recorded, not raised): {error}",
    C.LAUNCHES_TRUNCATED: "launch list truncated: {recorded} of {total} recorded",
    C.CACHE_DIR_OUTSIDE: "the app set its own kernel cache directory ({path}), outside the sandbox's private cache: "
    "the cold run may have reused builds from earlier runs and the warm run may not see this one's",
    C.WARM_RECOMPILED: "the warm re-run compiled {modules} module(s) again: the cache is not reused between runs",
    C.COLD_WALL_VARIES: "cold wall times vary by more than 50% between samples: the machine may be busy",
    C.BEFORE_SAMPLES_FAILED: "{failed} of {samples} BEFORE samples failed; its clocks are over the rest",
    C.CACHE_LEFT_SANDBOX: "the {side} app pointed kernel_cache_dir outside the sandbox: its cold runs may have "
    "reused a cache",
    C.HOOK_ERRORS: "the {side} hook reported {count} internal error(s): {first}",
    C.EXPERIMENT_NOT_APPLIED: "the setting(s) {settings} did not take in the measured process (this Warp has no "
    "such option, or the command never imported warp): the comparison shows no effect of them",
    C.DRIFT_CORRECTED: "the machine drifted between the two reports by a factor of {factor} (±{band}%), measured on "
    "{yardstick}: the AFTER clocks are divided by it and the bands widened by its uncertainty",
    C.DRIFT_UNCORRECTED: "no trustworthy drift estimate between the two reports ({reason}): a timed difference may be "
    "the machine, not the change; measure both trees interleaved (compare --before-cwd A --after-cwd B -- CMD)",
    C.CACHE_DIR_OWN: "the app set its own kernel cache directory ({path}), inside the sandbox's temp folder (a fresh "
    "one per run, e.g. from tempfile): nothing leaked in from earlier runs, but a warm run cannot reuse the cold "
    "run's builds there",
    C.PYTHON_RESOLVED: "command[0] {name!r} was resolved on the server's PATH to {path}; to be sure, {advice}",
    C.RULE_CLAIMS_FAILED: "rule {rule} could not declare its rebuilds: {error}",
    C.HOOK_MODES_DIFFER: "the hooks ran in different modes: {before} vs {after}",
    C.LAUNCH_PREFIX_CHECKED: "launch list truncated: checked the first {checked:,} of {total:,} launches, totals equal",
    C.BEFORE_BUILD_ERRORS: "the BEFORE run had {count} build error(s) (first: module {module})",
    C.NOT_SETTLED: "--until-decided stopped at {pairs} pairs before the verdict settled; more pairs could still "
    "change it",
    C.CONTENDED: "other work used {share:.0%} of this machine's CPU time while the {side}runs ran (median of the "
    "runs): the same compile takes more CPU time on shared cores and caches, so the CPU clocks and a saving in ms "
    "read high (its share of the compile less so); measure on a quieter machine for figures that carry",
    C.SETTLED_DIFFERS: "the bootstrap intervals settled on {settled} but the medians against the bands say {verdict}",
    C.RULE_SKIPPED: "rule {rule} skipped: {why}",
    C.RULE_FAILED: "rule {rule} ({mechanism}) failed: {error}",
    C.TEXT: "{text}",
}


def _samples_failed(p: dict[str, Any]) -> str:
    each = "; ".join(f"sample {f['sample']}: {f['failure']}" for f in p["failures"])
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
    if p.get("cwd") is None:
        return "no source scan: locations come from the measurement only"
    return (
        f"no source scan: the report's cwd {p['cwd']} is not a directory inside the allowed roots, so "
        "locations come from the measurement only"
    )


def _different_commands(p: dict[str, Any]) -> str:
    return f"the reports ran different commands: {' '.join(p['before'])!r} vs {' '.join(p['after'])!r}"


def _different_setup(p: dict[str, Any]) -> str:
    return f"measured {_SETUP[p['field']]}: {p['before']} vs {p['after']}"


_FUNCTIONS: dict[WarningCode, Callable[[dict[str, Any]], str]] = {
    C.SAMPLES_FAILED: _samples_failed,
    C.FEW_SAMPLES: _few_samples,
    C.TENTATIVE: _tentative,
    C.NO_SOURCE_SCAN: _no_source_scan,
    C.DIFFERENT_COMMANDS: _different_commands,
    C.DIFFERENT_SETUP: _different_setup,
}


def warning_text(code: WarningCode, params: dict[str, Any]) -> str:
    """The sentence for one warning; params a sentence does not know (an older or hand-made file) never raise."""
    try:
        if code in _FUNCTIONS:
            return _FUNCTIONS[code](params)
        return _TEMPLATES[code].format(**params)
    except (KeyError, TypeError, ValueError, IndexError):
        shown = ", ".join(f"{k}={v!r}" for k, v in params.items())
        return code.value + (f" ({shown})" if shown else "")
