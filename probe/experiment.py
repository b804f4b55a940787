"""Experiments: Warp settings the hook applies at `import warp`, so a fix is measured before anyone edits code.

An experiment is a small set of `KEY=VALUE` settings. The hook reads them from one environment variable in the
measured process and applies them right after Warp's own module finished importing, before the application (or a
library it imports) creates any kernel module, which is the point where a module copies its options from
`wp.config`. Nothing is written into the project. Only settings whose effect is understood are offered: each
names the mechanism it tests and what it changes, and an unknown key or a value of the wrong type is refused with
one line before anything runs.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError
from .models import Report, WarningCode, warn
from .models.comparison import ActsThrough
from .models.experiment import TryResult, describe

ENV_VAR = "WARP_COMPILE_SET"


@dataclass(frozen=True)
class Setting:
    key: str
    kind: str  # "bool", "int", "choice", "int_or_none"
    mechanism: str
    what: str
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    config: bool = True  # a `wp.config` attribute; False for behaviour the hook provides itself
    # acts on when and how builds run, not on what is built (e.g. worker threads): identical work is judged on
    # time; every other setting can only act through what is compiled, so identical work means no effect
    scheduling: bool = False


SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in (
        Setting("enable_backward", "bool", "CS-10", "generate and compile adjoint (backward) code for every module"),
        Setting("use_precompiled_headers", "bool", "CS-12", "build and reuse the CPU precompiled header"),
        Setting("max_unroll", "int", "CS-11", "loop trip count up to which Warp unrolls loops", minimum=0),
        Setting(
            "optimization_level", "int_or_none", "CS-10",
            "native optimisation level of generated code (None: Warp's default)", minimum=0,
        ),
        Setting("mode", "choice", "CS-3", "Warp's compile mode", choices=("release", "debug")),
        Setting(
            "load_module_max_workers", "int", "CS-13",
            "threads Warp may use to load modules concurrently (CUDA; CPU loads stay serial)", minimum=0,
            scheduling=True,
        ),
        Setting(
            "keep_kernel_cache", "bool", "CS-2",
            "skip the application's wp.clear_kernel_cache() / wp.clear_lto_cache() calls, so the kernel cache "
            "it filled stays usable", config=False,
        ),
    )
}

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _parse_value(s: Setting, raw: str) -> bool | int | str | None:
    text = raw.strip()
    if s.kind == "bool":
        low = text.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise UsageError(f"try: --set {s.key}: expected True or False, got {text!r}")
    if s.kind == "choice":
        if text not in s.choices:
            raise UsageError(f"try: --set {s.key}: expected one of {', '.join(s.choices)}, got {text!r}")
        return text
    if s.kind == "int_or_none" and text.lower() == "none":
        return None
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"try: --set {s.key}: expected a whole number, got {text!r}") from None
    if s.minimum is not None and value < s.minimum:
        raise UsageError(f"try: --set {s.key}: must be at least {s.minimum}, got {value}")
    return value


def parse_settings(items: list[str]) -> dict[str, bool | int | str | None]:
    """`["enable_backward=False", ...]` -> `{"enable_backward": False}`; one clear line per problem."""
    out: dict[str, bool | int | str | None] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"try: --set takes KEY=VALUE, got {item[:80]!r}")
        setting = SETTINGS.get(key)
        if setting is None:
            raise UsageError(f"try: unknown setting {key[:60]!r}; known: {', '.join(SETTINGS)}")
        if key in out:
            raise UsageError(f"try: --set {key} given twice")
        out[key] = _parse_value(setting, raw)
    if not out:
        raise UsageError("try: give at least one --set KEY=VALUE")
    return out


def settings_env(settings: Mapping[str, bool | int | str | None]) -> dict[str, str]:
    """The environment that carries an experiment into the measured process (read by the hook)."""
    return {ENV_VAR: json.dumps(dict(settings), sort_keys=True)} if settings else {}


def as_python(settings: Mapping[str, bool | int | str | None]) -> list[str]:
    """The lines a user would paste at the entry point to make an experiment permanent."""
    lines = []
    for key, value in settings.items():
        if SETTINGS[key].config:
            lines.append(f"wp.config.{key} = {value!r}")
        else:
            lines.append("# keep_kernel_cache: remove the wp.clear_kernel_cache() / wp.clear_lto_cache() calls")
    return lines


def acts_through(settings: Mapping[str, bool | int | str | None]) -> ActsThrough:
    """"scheduling" when any setting only changes when builds run, else "compiled" (see `compare`)."""
    return "scheduling" if any(SETTINGS[k].scheduling for k in settings if k in SETTINGS) else "compiled"


# ------------------------------------------------------------------------------------------------ running one




def run_try(
    command: list[str],
    cwd: Path,
    settings: Mapping[str, bool | int | str | None],
    *,
    pairs: int | None = 4,
    samples: int | None = None,
    until_decided: bool = False,
    max_pairs: int = 20,
    timeout_s: float = 900.0,
    progress: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
) -> TryResult:
    """Interleaved pairs by default (drift on a shared machine hits both arms); `samples` measures each arm in turn."""
    from . import measure as core
    from .compare import compare, interleaved_compare
    from .measure import measure

    env = settings_env(settings)
    what = describe(settings)
    acts = acts_through(settings)
    if samples is not None:
        before = measure(
            command, cwd, samples=samples, timeout_s=timeout_s, label="as is", progress=progress, cancel=cancel
        )
        after = measure(
            command, cwd, samples=samples, timeout_s=timeout_s, label=f"with {what}", progress=progress,
            cancel=cancel, extra_env=env,
        )
        comparison = compare(before, after, before_label="as is", after_label=f"with {what}", acts_through=acts)
        applied = dict(after.experiment)
    else:
        from .measure import build_report

        seen: dict[str, dict[str, str]] = {}

        def build(cmd: list[str], where: Path, data: list, **kw: object) -> Report:
            report = build_report(cmd, where, data, **kw)  # type: ignore[arg-type]
            seen[str(kw.get("label", ""))] = dict(report.experiment)
            return report

        def sample(*args: object, **kw: object) -> object:
            return core.run_sample(*args, cancel=cancel, **kw)  # type: ignore[arg-type]

        comparison = interleaved_compare(
            command, cwd, cwd, samples=pairs, until_decided=until_decided, max_samples=max_pairs,
            timeout_s=timeout_s, progress=progress, arm_env=({}, env), arm_labels=("as is", f"with {what}"),
            run_sample=sample, build_report=build, acts_through=acts,
        )
        applied = seen.get("after", {})
    missing = sorted({k for k in settings if applied.get(k) not in ("applied", "hook")})
    if missing:
        comparison.warnings.append(warn(WarningCode.EXPERIMENT_NOT_APPLIED, settings=", ".join(missing)))
    result = TryResult(
        command=list(command), cwd=str(cwd), settings=dict(settings), applied=applied,
        paste=as_python(settings), comparison=comparison,
    )
    return result
