"""The agent contract: what an agent under evaluation is given and what it must deliver, in one place.

Printed by `warp-compile eval --contract`; the prompt an agent receives ends with the same deliverables.
"""

from __future__ import annotations

import json

from .models import Answer, Case

ENV_PROMPT = "WARP_COMPILE_PROMPT"
ENV_CASE = "WARP_COMPILE_CASE"
ENV_ANSWER = "WARP_COMPILE_ANSWER"

DELIVERABLES = """\
Your working directory is a private copy of the project; only this copy is judged. Deliver two things:
1. The fix: edit the files in this directory so the app compiles less at startup while printing exactly what it
   printed before and launching the same kernels. If nothing is worth fixing, change nothing.
2. The diagnosis: write a JSON file to the path in the environment variable WARP_COMPILE_ANSWER{where} (outside
   this directory; create only that file), shaped as
   {{"findings": [{{"mechanism": "CS-3", "locations": [{{"file": "pkg/module.py", "line": 47}}]}}], "summary": "..."}}
   with one finding per mechanism (CS-1..CS-13, see `warp-compile explain --list`) and the lines to change, file
   paths relative to this directory. An empty findings list means "nothing to fix". The JSON that
   `warp-compile diagnose --json` writes is accepted as is."""


def agent_prompt(case: Case, answer_path: str | None = None) -> str:
    """The user's request followed by the deliverables (with this run's answer path when known)."""
    where = f" (for this run: {answer_path})" if answer_path else ""
    return f"{case.prompt.strip()}\n\n{DELIVERABLES.format(where=where)}\n"


def contract_text() -> str:
    schema = json.dumps(Answer.model_json_schema(), indent=2)
    return (
        "warp-compile eval: the agent contract\n\n"
        "The harness runs the agent command once per case and trial with:\n"
        "  cwd                   a private copy of the case's project/ (nothing else of the case is visible)\n"
        f"  ${ENV_PROMPT}   the request plus the deliverables below (stdin is empty)\n"
        f"  ${ENV_CASE}     the case id\n"
        f"  ${ENV_ANSWER}   where to write the diagnosis JSON (a file outside the copy; its folder exists)\n\n"
        "Time limit: --timeout seconds (the agent's process group is killed after it). The exit status, wall time,\n"
        "stdout and stderr are recorded (kept under --out DIR). After the agent exits, its copy is copied again\n"
        "without bytecode and measured against a fresh copy of the shipped project, interleaved.\n\n"
        + DELIVERABLES.format(where="")
        + "\n\nJSON schema of the answer:\n"
        + schema
        + "\n"
    )
