"""Record (or check) the golden outputs that pin diagnose / compare / measure-text behaviour over the fixtures.

    python scripts/golden.py measure   # re-measure every bundled fixture (project/ and fixed/) into tests/golden/
    python scripts/golden.py measure cuda_patch_mixer ...   # only the named cases (e.g. the ones just added)
    python scripts/golden.py render    # re-render the expected outputs from the saved reports

The saved reports are the inputs; the rendered outputs are what tests/test_golden.py expects. Re-measuring is only
needed when the report schema changes; re-rendering only when a behaviour change is intended (say so in the commit).
A case whose case.json has "cuda_arch" is measured with `--cuda-arch N` (a CUDA replay after the CPU run).
Paths are stored relative to the project root ("<ROOT>") so a clone anywhere renders the same text.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
FIXTURES = ROOT / "evals" / "fixtures"
PLACEHOLDER = "<ROOT>"


def cases() -> list[Path]:
    return sorted(p for p in FIXTURES.iterdir() if (p / "case.json").is_file())


def measure_all(names: list[str] | None = None) -> None:
    known = {c.name for c in cases()}
    unknown = sorted(set(names or []) - known)
    if unknown:
        sys.exit(f"golden.py: unknown case(s): {', '.join(unknown)}")
    for case in cases():
        if names and case.name not in names:
            continue
        spec = json.loads((case / "case.json").read_text())
        cuda = ["--cuda-arch", str(spec["cuda_arch"])] if spec.get("cuda_arch") else []
        argv = [sys.executable if spec["command"][0] == "python" else spec["command"][0], *spec["command"][1:]]
        for arm in ("project", "fixed"):
            tree = case / arm
            if not tree.is_dir():
                continue
            out = GOLDEN / case.name / f"{arm}.report.json"
            out.parent.mkdir(parents=True, exist_ok=True)
            cmd = [sys.executable, "-m", "warp_compile.cli", "measure", "--samples", "1", "--quiet", *cuda,
                   "--cwd", str(tree), "--json", str(out), "--", *argv]
            print("measuring", case.name, arm, flush=True)
            subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL)
            text = out.read_text().replace(str(ROOT), PLACEHOLDER).replace(sys.executable, "<PYTHON>")
            out.write_text(text)


def load(path: Path) -> str:
    """A saved report with its placeholders filled for this checkout."""
    return path.read_text().replace(PLACEHOLDER, str(ROOT))


def render_all() -> None:
    from tests.golden_render import render_case

    for case_dir in sorted(p for p in GOLDEN.iterdir() if p.is_dir()):
        for name, text in render_case(case_dir).items():
            (case_dir / name).write_text(text)
        print("rendered", case_dir.name)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    if sys.argv[1:2] == ["measure"]:
        measure_all(sys.argv[2:])
    elif sys.argv[1:] == ["render"]:
        render_all()
    else:
        print("usage: scripts/golden.py render | measure [NAME ...]  (render: the goldens' text from their saved JSON; "
              "measure: run the apps again and save it)", file=sys.stderr)
        sys.exit(0 if sys.argv[1:2] in (["-h"], ["--help"]) else 2)
