"""The `optimize_compile_time` prompt: measure -> diagnose -> change -> compare -> report, with a ledger."""

from __future__ import annotations

import json
import shlex

TEMPLATE = """\
Goal: cut the time this NVIDIA Warp app spends compiling kernels before its first launch, and prove every change by
measurement. Use the warp-compile tools; do not guess at timings.

Command (argv): {command}
Working directory: {cwd}
Run it with the project's interpreter: make command[0] the absolute path of the project's venv python (a bare
`python` is resolved on the server's PATH, which may lack the project's packages; the results name the
interpreter that ran).

1. Measure the baseline.
   Call `measure` with command={command_json}, cwd={cwd_json}, samples=3, label="baseline"
   (add json_path=".warp-compile/baseline.json" to keep it on disk). Keep the returned `report_id`.
   Read the clocks: compile_elapsed (cold wall - warm wall) is what the user waits for; cold_module is what was
   built; warm_module is what every later run still pays. If every sample failed, fix the command first.

2. Diagnose.
   Call `diagnose` with report=<baseline report_id> (no re-run). Findings are ranked by estimated saving; each names
   a mechanism (CS-n), the module(s), the evidence, the line(s) to change and the fix. For any finding you do not
   fully understand, call `explain_mechanism` with its id and read "When not to" before you touch the code.
   `hash_changes` lists every module that was built again under a new identity and why.

3. Change, one mechanism at a time.
   Apply the smallest edit that removes the cause at the reported location. Keep the work identical: the same
   kernels launched in the same order on the same devices with the same shapes and dtypes. Do not turn caching off,
   do not skip launches, do not change numerics (fast_math, precision) unless the user asked for it.
   If a fix's "When not to" applies, or it would change behaviour, do not apply it: record it in the ledger.

4. Compare.
   Call `measure` again with the same command, cwd and samples, label="after-CS-n", then
   `compare` with before=<baseline report_id> and after=<new report_id>.
   - IMPROVED with equivalence "equivalent": keep the change; the new report becomes the next baseline.
   - INCONCLUSIVE: re-measure with more samples (5-7); if still inconclusive, revert and record it in the ledger.
   - REGRESSION: revert, and record it.
   - INVALID (the work changed): revert, or fix the change so the launches match, then compare again.
   - UNVERIFIED: the launch structure could not be checked; say so in the report.
   Repeat steps 2-4 for the next finding while findings with a real estimated saving remain.

5. Report to the user.
   - A table of kept changes: mechanism, file:line, what changed, compile elapsed before -> after (median ± MAD,
     number of samples), and the compare verdict.
   - The ledger of declined options: every finding or fix you did not keep, with the reason (its "When not to"
     applied, it would change behaviour or numerics, compare said INCONCLUSIVE / REGRESSION / INVALID, or the saving
     was below the noise band), so the user can decide about each one.
   - What remains: the largest builds still paid in the cold run, and any warnings from the reports.
"""


def render(command: str = "", cwd: str = ".") -> str:
    try:
        argv = shlex.split(command) if command.strip() else ["python", "app.py"]
    except ValueError:
        argv = command.split()
    shown = command.strip() or "(not given: ask the user; e.g. python app.py)"
    return TEMPLATE.format(
        command=shown,
        command_json=json.dumps(argv),
        cwd=cwd or ".",
        cwd_json=json.dumps(cwd or "."),
    )
