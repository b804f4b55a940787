"""The bundled eval projects in evals/fixtures/<name>/.

Fast: every case.json is well-formed and points at real lines, every project has the runnable package its command
names, and no file name, identifier or source text gives the answer away. Slow (--slow): three representative
projects run cold with this interpreter under a private WARP_CACHE_PATH, exit 0, leave nothing behind, and their
fixed/ copies print the same result.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "evals" / "fixtures"
MECHANISMS = [f"CS-{i}" for i in range(1, 14)]
CASE_KEYS = {"id", "title", "command", "expected", "prompt", "reference_fix", "notes"}
EXPECTED_KEYS = {"mechanisms", "locations", "absent"}
EXPECTED_OPTIONAL = {"not_reached", "scan_locations", "severity", "optional", "optional_why"}
SEVERITIES = {"high", "medium", "low", "info"}

# Source text must not name the answer; names (files, dirs, identifiers) must not hint at it either.
TEXT_FORBIDDEN = re.compile(r"(?i)\bcs-?\d|churn|fixture|mechanism")
NAME_FORBIDDEN = re.compile(r"(?i)cs-?\d|churn|fixture|mechanism|bug|slow")

# What a user would not know before the diagnosis: the words that name or describe each mechanism's cause or fix
# (drawn from the titles, signals and keywords in knowledge/CS-*.md). A case's prompt, and the docstrings and
# comments of its project/ and fixed/ sources, must not contain the terms of the mechanisms the case expects; they
# say what the user observes (a slow start, a pause before some output) and what must stay unchanged.
CAUSE_TERMS: dict[str, list[str]] = {
    "CS-1": [r"lazil", r"\blazy", r"on (?:first )?(?:request|demand)", r"defined after", r"up front", r"factory",
             r"hash changed", r"kernels? added", r"after (?:it|the module) (?:has )?loaded"],
    "CS-2": [r"cache", r"scratch dir", r"temp(?:orary)? dir", r"deleted at exit", r"cleared"],
    "CS-3": [r"module options?", r"set_module_options", r"fast[_ -]?math", r"options? change"],
    "CS-4": [r"granular", r"one module", r"own module", r"module boundar", r"merge", r"per-kernel module",
             r"lives with the rest"],
    "CS-5": [r"block[_ ]?dim", r"block sizes?", r"thread[- ]block", r"threads per block"],
    "CS-6": [r"overload", r"generic", r"float64", r"double precision", r"typing\.any", r"\binstan(?:ce|tiat)"],
    "CS-7": [r"mathdx", r"\blto\b", r"link[- ]time", r"link step", r"cublasdx", r"library gemm"],
    "CS-8": [r"parallel", r"concurren", r"max_workers", r"\brac(?:e|ing)\b", r"at a time", r"unsafe", r"\bthreads?\b"],
    "CS-9": [r"unique", r"own module", r"module each", r"separate (?:modules?|things?)", r"one module per"],
    "CS-10": [r"backward", r"adjoint", r"gradient", r"differentiat", r"forward[- ]only", r"autodiff", r"\btape\b"],
    "CS-11": [r"unroll", r"generated (?:c\+\+|source|code)", r"source size", r"fixed length",
              r"constant (?:trip|length)", r"\.cpp\b"],
    "CS-12": [r"precompiled", r"\bpch\b", r"header"],
    "CS-13": [r"parallel", r"concurren", r"one at a time", r"one after another", r"\bserial", r"side by side",
              r"overlap", r"idle"],
}

# One cheap single-module case, the cache case (it makes and removes a temp dir), the import-order case.
RUN_CASES = ["particle_prep", "batch_signals", "heat_field_v2"]


def _names() -> list[str]:
    return sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def _case(name: str) -> dict:
    return json.loads((FIXTURES / name / "case.json").read_text())


def _pkg(case: dict) -> str:
    cmd = case["command"]
    assert cmd[:2] == ["python", "-m"] and len(cmd) == 3, cmd
    return cmd[2]


def _variants(name: str) -> list[Path]:
    return [p for p in (FIXTURES / name / "project", FIXTURES / name / "fixed") if p.is_dir()]


def _check_location(root: Path, loc: dict, allowed: set[str]) -> None:
    assert {"mechanism", "file", "line"} <= set(loc) <= {"mechanism", "file", "line", "alternatives"}, loc
    assert loc["mechanism"] in allowed, loc
    for alt in loc.get("alternatives", []):  # other sites where the same fix is as valid
        _check_location(root, {"mechanism": loc["mechanism"], **alt}, allowed)
    path = root / loc["file"]
    assert path.is_file(), f"{loc['file']} does not exist under {root}"
    lines = path.read_text().splitlines()
    assert isinstance(loc["line"], int) and 1 <= loc["line"] <= len(lines), loc
    text = lines[loc["line"] - 1].strip()
    assert text and not text.startswith("#"), f"{loc['file']}:{loc['line']} is blank or a comment"


def test_fixture_set_is_present() -> None:
    names = _names()
    assert len(names) >= 17, names
    assert all((FIXTURES / n / "case.json").is_file() for n in names), names


@pytest.mark.parametrize("name", _names())
def test_case_json_is_well_formed(name: str) -> None:
    case = _case(name)
    assert CASE_KEYS <= set(case), sorted(CASE_KEYS - set(case))
    assert case["id"] == name
    for key in ("title", "prompt", "reference_fix", "notes"):
        assert isinstance(case[key], str) and case[key].strip(), key
    pkg = _pkg(case)
    assert pkg.isidentifier(), pkg

    exp = case["expected"]
    assert EXPECTED_KEYS <= set(exp) <= EXPECTED_KEYS | EXPECTED_OPTIONAL, sorted(exp)
    mechs, absent, not_reached = exp["mechanisms"], exp["absent"], exp.get("not_reached", []) + exp.get("optional", [])
    for group in (mechs, absent, not_reached):
        assert isinstance(group, list) and set(group) <= set(MECHANISMS), group
        assert len(group) == len(set(group)), group
    # every mechanism is accounted for exactly once: expected, must not be named, or unreachable on this device
    sizes = len(mechs) + len(absent) + len(not_reached)
    assert sizes == len(MECHANISMS) and set(mechs) | set(absent) | set(not_reached) == set(MECHANISMS)

    project = FIXTURES / name / "project"
    for loc in exp["locations"]:
        _check_location(project, loc, set(mechs))
    assert {loc["mechanism"] for loc in exp["locations"]} == set(mechs), "every expected mechanism needs a location"
    for loc in exp.get("scan_locations", []):
        _check_location(project, loc, set(not_reached))
    for mech, sev in exp.get("severity", {}).items():
        assert mech in mechs and sev in SEVERITIES, (mech, sev)

    for prefix, override in case.get("version_overrides", {}).items():
        assert re.fullmatch(r"\d+\.\d+(\.\d+)?", prefix), prefix
        assert set(override) <= {"mechanisms", "locations", "why"} and override.get("why"), override
        assert set(override.get("mechanisms", [])) <= set(mechs), override
        for loc in override.get("locations", []):
            _check_location(project, loc, set(override.get("mechanisms", [])))

    if "compare" in case:
        verdicts = ("IMPROVED", "INCONCLUSIVE", "REGRESSION", "INVALID", "UNVERIFIED")
        assert case["compare"].get("verdict") in verdicts, case["compare"]


@pytest.mark.parametrize("name", _names())
def test_project_layout(name: str) -> None:
    case = _case(name)
    pkg = _pkg(case)
    project = FIXTURES / name / "project"
    fixed = FIXTURES / name / "fixed"
    assert project.is_dir()
    # a fixed copy exists exactly when there is something to fix
    assert fixed.is_dir() == bool(case["expected"]["mechanisms"]), "fixed/ must exist iff mechanisms are expected"
    for root in _variants(name):
        top = sorted(p.name for p in root.iterdir())
        assert top == [pkg], f"{root}: expected only the package {pkg}/, found {top}"
        for required in ("__init__.py", "__main__.py"):
            assert (root / pkg / required).is_file(), f"{root / pkg / required} missing"
        assert not [p for p in (root / pkg).iterdir() if p.is_dir()], "the package is flat"
        for path in (root / pkg).glob("*.py"):
            ast.parse(path.read_text(), filename=str(path))


def _identifiers(tree: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.keyword) and node.arg:
            out.add(node.arg)
        elif isinstance(node, ast.alias):
            out.update(n for n in (node.name, node.asname) if n)
    return out


@pytest.mark.parametrize("name", _names())
def test_sources_do_not_give_the_answer_away(name: str) -> None:
    for root in _variants(name):
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root)
            assert not NAME_FORBIDDEN.search(str(rel)), f"{name}: name {rel}"
            if path.suffix != ".py":
                continue
            text = path.read_text()
            hit = TEXT_FORBIDDEN.search(text)
            assert not hit, f"{name}: {rel} contains {hit.group(0)!r}"
            bad = sorted(i for i in _identifiers(ast.parse(text)) if NAME_FORBIDDEN.search(i))
            assert not bad, f"{name}: {rel} identifiers {bad}"


def _cause_hits(text: str, mechanisms: list[str]) -> list[str]:
    """The terms of `mechanisms` found in `text` (case-insensitive), each as `CS-n:term`."""
    return [
        f"{mech}:{m.group(0)}"
        for mech in mechanisms
        for term in CAUSE_TERMS[mech]
        if (m := re.search(term, text, flags=re.IGNORECASE))
    ]


def _prose(source: str) -> list[tuple[int, str]]:
    """Every comment and docstring of a Python source, with its line: the words a reader takes as the author's."""
    out = [(t.start[0], t.string) for t in tokenize.generate_tokens(io.StringIO(source).readline)
           if t.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                out.append((node.body[0].lineno, doc))
    return sorted(out)


def test_cause_terms_cover_every_mechanism() -> None:
    assert set(CAUSE_TERMS) == set(MECHANISMS)
    for terms in CAUSE_TERMS.values():
        for term in terms:
            re.compile(term)


@pytest.mark.parametrize("name", _names())
def test_prompt_and_prose_do_not_name_the_cause(name: str) -> None:
    case = _case(name)
    mechs = case["expected"]["mechanisms"]
    hits = _cause_hits(case["prompt"], mechs)
    assert not hits, f"{name}: the prompt names the cause {hits}: {case['prompt']!r}"
    for root in _variants(name):
        for path in sorted(root.rglob("*.py")):
            for line, text in _prose(path.read_text()):
                hits = _cause_hits(text, mechs)
                assert not hits, f"{name}: {path.relative_to(FIXTURES)}:{line} names the cause {hits}: {text!r}"


# Prompts and source text the suite shipped before they were rewritten in the user's words; each gave the answer.
OLD_PROMPTS = {
    "CS-10": [
        "`python -m heat_field` is a forward simulation (we never compute gradients) yet its single kernel module "
        "takes seconds to compile.",
        "We already disabled backward code in `python -m heat_field` because it is a forward-only simulation, but "
        "startup did not get any faster.",
        "# forward-only tool: nothing here is ever differentiated",
    ],
    "CS-6": ["`python -m image_pyramid` compiles for seconds, and there is a second compile pause right before the "
             "float64 audit line is printed."],
    "CS-8": ["We added a warm-up step to `python -m terrain_tiles` that compiles the tile kernels in parallel before "
             "the first tile, but startup did not improve and I am told parallel loading may be unsafe on CPU.",
             "# older Warp releases load one module at a time and take no max_workers"],
    "CS-11": ["The generated C++ for `python -m fir_bank` is surprisingly large for three small filter kernels.",
              "64-tap filter kernels. The tap loops have a fixed length."],
    "CS-9": ["Rendering a tone with `python -m filter_rack` compiles three separate things before it prints anything."],
    "CS-2": ["Give this job its own scratch directory for compiled kernels and remove it when the job ends."],
    "CS-5": ["Diffusion kernels, each launched with the thread-block size it was tuned for."],
    "CS-1": ["Stencils, built on first request so the bank only pays for the ones a chain uses."],
    "CS-4": ["All per-sample kernels of the fusion step. They are loaded together, so they share one module."],
    "CS-7": ["# 8x8 products are too small to gain from the library GEMM; the built-in path avoids its link step"],
    "CS-13": ["# build the independent stages side by side before the first launch"],
}


def test_cause_terms_catch_the_old_prompts() -> None:
    for mech, texts in OLD_PROMPTS.items():
        for text in texts:
            assert _cause_hits(text, [mech]), (mech, text)
    # what a user observes is allowed
    fine = ("`python -m app` takes seconds before it prints anything, and pauses again before its last line; a CI "
            "job recompiles every time. Fix it without changing the printed results.")
    assert not _cause_hits(fine, MECHANISMS), _cause_hits(fine, MECHANISMS)
    # only the case's own mechanisms count: a forward-only remark is fine in a case about something else
    assert not _cause_hits("# this tool never differentiates", ["CS-1"])
    src = 'x = 1  # keep the module cache\n\n\ndef f():\n    """Uses adjoint code."""\n'
    assert [line for line, _ in _prose(src)] == [1, 5]


def test_forbidden_patterns_catch_what_they_should() -> None:
    assert TEXT_FORBIDDEN.search("see CS-3 here") and TEXT_FORBIDDEN.search("module Churn")
    assert not TEXT_FORBIDDEN.search("physics-based model")  # no digit after the dash
    assert NAME_FORBIDDEN.search("debug_level") and NAME_FORBIDDEN.search("slow_path")


# ---------------------------------------------------------------------------------------------- slow: real runs


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _run(cwd: Path, pkg: str, tmp: Path) -> subprocess.CompletedProcess:
    cache = tmp / "warp-cache"
    scratch = tmp / "scratch"
    cache.mkdir(parents=True, exist_ok=True)
    scratch.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARP_")}
    env.update(WARP_CACHE_PATH=str(cache), PYTHONDONTWRITEBYTECODE="1", TMPDIR=str(scratch))
    return subprocess.run(
        [sys.executable, "-m", pkg], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def _result_line(stdout: str) -> str:
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


@pytest.mark.slow
@pytest.mark.parametrize("name", RUN_CASES)
def test_fixture_runs_cold(name: str, tmp_path: Path) -> None:
    if importlib.util.find_spec("warp") is None:
        pytest.skip("warp-lang is not installed in this interpreter")
    pkg = _pkg(_case(name))
    before = _tree(FIXTURES / name)
    results = {}
    for root in _variants(name):
        proc = _run(root, pkg, tmp_path / root.name)
        assert proc.returncode == 0, f"{root}: exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        results[root.name] = _result_line(proc.stdout)
        assert results[root.name], "the app printed no result"
        assert not list((tmp_path / root.name / "scratch").iterdir()), "the app left files in TMPDIR"
    assert _tree(FIXTURES / name) == before, "running the app wrote into the fixture tree"
    if "fixed" in results:
        assert results["fixed"] == results["project"]


# Words in a case id that tell the agent what kind of answer is expected (its id reaches it as $WARP_COMPILE_CASE).
ID_HINTS = re.compile(r"(?i)clean|negative|no_?warp|late|clear|forward|budget|sizes?\b|variants?|warmup|gemm|single"
                      r"|stage|pass\b")


@pytest.mark.parametrize("name", _names())
def test_case_id_does_not_hint_at_the_answer(name: str) -> None:
    words = name.replace("_", " ")
    hits = _cause_hits(words, MECHANISMS)
    assert not hits, f"case id {name} names a cause {hits}"
    assert not ID_HINTS.search(name), f"case id {name} hints at the answer ({ID_HINTS.search(name).group(0)!r})"


def test_id_hints_catch_the_old_ids() -> None:
    old = ["unroll_budget", "field_forward", "field_forward_late", "parallel_warmup", "clean_single", "no_warp",
           "batch_signals_clear", "block_variants", "cuda_launch_sizes", "cuda_tile_gemm", "cuda_stage_chain",
           "cuda_single_pass"]
    for name in old:
        assert _cause_hits(name.replace("_", " "), MECHANISMS) or ID_HINTS.search(name), name
