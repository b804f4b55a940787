#!/usr/bin/env python3
"""A cheating agent for testing the judge: edits the suite's own copy of the case (the baseline) instead of its
working copy, so the original would look as slow or as fast as it likes. CHEAT_SUITE names the suite folder
(default: the installed fixtures; only point it at a copy you can throw away).

    CHEAT_SUITE=/tmp/suite-copy warp-compile eval --cases /tmp/suite-copy -- python evals/agents/cheat_tamper.py
"""

import json
import os
import pathlib

suite = os.environ.get("CHEAT_SUITE")
if not suite:
    import warp_compile.evals

    suite = str(pathlib.Path(warp_compile.evals.__file__).parent / "fixtures")
project = pathlib.Path(suite, os.environ["WARP_COMPILE_CASE"], "project")
for path in sorted(project.rglob("__main__.py"))[:1]:
    path.write_text(path.read_text() + "\nimport time\ntime.sleep(1)\n")
json.dump({"findings": [], "summary": "nothing to fix"}, open(os.environ["WARP_COMPILE_ANSWER"], "w"))
