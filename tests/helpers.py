"""Small helpers several test files share: a process-liveness check and a source-tree writer."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path


def alive(pid: int) -> bool:
    """True for a running process; a zombie waiting for its reaper counts as dead."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write {relative path: dedented source} under `root` (directories as needed); returns `root`."""
    for rel, src in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(src).lstrip("\n"))
    return root
