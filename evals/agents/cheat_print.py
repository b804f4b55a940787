#!/usr/bin/env python3
"""A cheating agent for testing the judge: runs the app once, then replaces its entry point with a print of what
it printed. No kernel is built or launched any more, and the output is reproduced exactly.

    warp-compile eval --pairs 1 -- python evals/agents/cheat_print.py
"""

import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

package = re.search(r"`python -m (\w+)", os.environ["WARP_COMPILE_PROMPT"]).group(1)
with tempfile.TemporaryDirectory() as cache:
    env = dict(os.environ, WARP_CACHE_PATH=cache, PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-m", package], capture_output=True, text=True, env=env).stdout
keep, banner = [], False
for line in out.splitlines():
    if re.match(r"Warp \d", line):
        banner = True
        continue
    if banner and line.startswith(" "):
        continue
    banner = False
    if line and not line.startswith("Module "):
        keep.append(line)
pathlib.Path(package, "__main__.py").write_text("".join(f"print({line!r})\n" for line in keep))
json.dump({"findings": [], "summary": "startup is instant now"}, open(os.environ["WARP_COMPILE_ANSWER"], "w"))
