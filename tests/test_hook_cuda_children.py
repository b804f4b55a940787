"""The replay's forked passes: a child taken after another must not hold the first one's request pipe open.

Two children are forked before any build (forward-only and header-off); asking the first waits for EOF on its
request pipe, which never came while the second child kept a copy of its write end (the replay hung at exit).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HOOK_CUDA = Path(__file__).resolve().parents[1] / "probe" / "hook_cuda.py"

SCRIPT = r"""
import importlib.util, sys
spec = importlib.util.spec_from_file_location("hook_cuda", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
first = mod._Child(lambda req: {"first": req})
second = mod._Child(lambda req: {"second": req})
assert first.pid and second.pid
print(first.ask([1]), second.ask([2]))
third = mod._Child(lambda req: {"third": req})
fourth = mod._Child(lambda req: {"fourth": req})
fourth.close()
print(third.ask([3]))
"""


def test_children_forked_in_turn_each_answer() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(HOOK_CUDA)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["{'first': [1]} {'second': [2]}", "{'third': [3]}"]
