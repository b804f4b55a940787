"""The house as the code's own imports draw it (issue 23): the folders are the packages, one direction, no circles.

Read from the source with `ast`, nothing imported: inside the package folders every import of the project is
relative (`from ..models import Report`), so a tool that reads `probe/x.py` as module `probe.x` resolves it; the
graph of those imports (module level and the lazy ones inside functions) has no cycle, `models/` sits at the bottom,
`render/` on top of it, the core never imports a front end, and no rule imports another rule. Modules stay under
their size cap, and the core repeats itself (identical runs of six code lines) in at most eight places.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"probe": "warp_compile.probe", "server": "warp_compile.server", "evals": "warp_compile.evals",
            "knowledge": "warp_compile.knowledge", "cli": "warp_compile.cli", "warp_compile": "warp_compile"}
MAX_LINES = 800
MAX_HOOK_LINES = 1120  # the injected hook and its companions run in the user's Python: stdlib only, one file each
# (1100 until the launch path's place cache, issue 41: the launch wrappers read hook.py's globals, so it stays there)
MAX_REPEATS = 8  # runs of 6+ alike lines in the core (probe/)


def _sources() -> dict[str, Path]:
    """Module name as the folders spell it (`probe.rules.context`) -> file; fixtures and standalone agent scripts
    (evals/agents/: programs an eval runs, not modules of the package) are not part of the house."""
    out: dict[str, Path] = {}
    for folder in PACKAGES:
        for p in sorted((ROOT / folder).rglob("*.py")):
            rel = p.relative_to(ROOT)
            if "fixtures" in rel.parts or rel.parts[:2] == ("evals", "agents") or "__pycache__" in rel.parts:
                continue
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = p
    return out


SOURCES = _sources()
TREES = {m: ast.parse(p.read_text()) for m, p in SOURCES.items()}


def _package(module: str) -> list[str]:
    parts = module.split(".")
    return parts if SOURCES[module].name == "__init__.py" else parts[:-1]


def _imports(module: str) -> list[tuple[str, str, int]]:
    """(imported module, imported name, line) for every relative import of the project in `module`."""
    out = []
    for node in ast.walk(TREES[module]):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = _package(module)[: len(_package(module)) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.append((sub if sub in SOURCES else target, alias.name, node.lineno))
    return out


def _graph() -> dict[str, set[str]]:
    g: dict[str, set[str]] = defaultdict(set)
    for m in SOURCES:
        for target, _name, _line in _imports(m):
            if target in SOURCES and target != m:
                g[m].add(target)
    return g


GRAPH = _graph()


def test_no_absolute_self_import_in_the_package_folders() -> None:
    found = []
    for m, tree in TREES.items():
        for node in ast.walk(tree):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            found += [f"{SOURCES[m].relative_to(ROOT)}:{node.lineno}" for n in names
                      if n == "warp_compile" or n.startswith("warp_compile.")]
    assert found == [], "import relatively inside the package (from ..models import Report): " + ", ".join(found)


def test_the_graph_is_drawn_and_has_no_cycle() -> None:
    arrows = sum(len(v) for v in GRAPH.values())
    assert arrows >= 50, arrows  # the dependencies are visible to a tool that reads the folders
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for t in sorted(GRAPH.get(m, ())):
            if state.get(t) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(t):] + [t]))
            if t not in state:
                visit(t)
        path.pop()
        state[m] = 2

    for m in sorted(SOURCES):
        if m not in state:
            visit(m)


def _layer_violations() -> list[str]:
    bad = []
    for m, targets in GRAPH.items():
        for t in sorted(targets):
            if m.startswith("probe.models") and not (t.startswith("probe.models") or t == "probe.errors"):
                bad.append(f"{m} -> {t}: the schema imports only the schema and the error types")
            elif m.startswith("probe.render") and not (t.startswith(("probe.models", "probe.render")) or
                                                       t == "probe.fmt"):
                bad.append(f"{m} -> {t}: a renderer reads the models and the formatter only")
            elif m.startswith("probe") and t.split(".")[0] in ("cli", "server", "evals", "warp_compile"):
                bad.append(f"{m} -> {t}: the core never imports a front end or the eval suite")
    return bad


def test_one_direction_models_at_the_bottom_render_on_top_the_core_below_the_front_ends() -> None:
    assert _layer_violations() == []


def test_no_rule_imports_another_rule_or_a_private_name_across_packages() -> None:
    rules = ast.literal_eval(next(
        n.value for n in TREES["probe.rules"].body
        if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "") == "RULES"
    ))
    rule_modules = {f"probe.rules.{r}" for r in rules}
    assert rule_modules <= set(SOURCES)
    bad = [f"{m} -> {t}" for m, ts in GRAPH.items() for t in ts if t in rule_modules]
    assert bad == [], "shared code goes in rules/helpers.py or a helper module, not in another rule"
    private = [f"{m}:{line} imports {name} from {t}" for m in SOURCES for t, name, line in _imports(m)
               if name.startswith("_") and not name.startswith("__") and ".".join(_package(m)) !=
               (t if SOURCES.get(t, Path()).name == "__init__.py" else t.rsplit(".", 1)[0])]
    assert private == []


def test_every_pydantic_result_model_lives_in_models() -> None:
    """Result types are schema: probe/models/ (the eval suite's case and answer files keep evals/models.py)."""
    bases = {"BaseModel", "Model", "_Model"}
    found = []
    for m, tree in TREES.items():
        if m.startswith("probe.models") or m == "evals.models":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                names = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                imported_models = {n for t, n, _ in _imports(m) if t.startswith("probe.models")}
                if names & bases or names & imported_models:
                    found.append(f"{m}.{node.name}")
    assert found == []


def test_modules_stay_under_their_size_cap() -> None:
    over = []
    for p in SOURCES.values():
        n = len(p.read_text().splitlines())
        cap = MAX_HOOK_LINES if p.name.startswith("hook") else MAX_LINES
        if n > cap:
            over.append(f"{p.relative_to(ROOT)}: {n} > {cap}")
    assert over == []


_SKIP = re.compile(r"^(#.*|[)\]}]+[,:]?|(from|import) .*|@\w.*|\"\"\"|else:|try:|pass|return|\.\.\.)?$")


def _meaningful(path: Path) -> list[tuple[int, str]]:
    """(line number, text with white space folded) of the lines that carry code: no blanks, comments, imports,
    lone punctuation, decorators (as the repeated-code tool of the project's checklist passes them over)."""
    out = []
    for i, raw in enumerate(path.read_text().splitlines(), 1):
        text = " ".join(raw.split())
        if not _SKIP.match(text):
            out.append((i, text))
    return out


def repeated_runs(files: list[Path], root: Path = ROOT, window: int = 6) -> list[tuple[str, str]]:
    """Pairs of places (file:line ~ file:line) that share `window` or more identical meaningful lines in a row,
    one pair per pair of files and region; a run seen in more than eight places is too common to count."""
    seen: dict[tuple[str, ...], list[tuple[Path, int]]] = defaultdict(list)
    for f in files:
        lines = _meaningful(f)
        for k in range(len(lines) - window + 1):
            key = tuple(t for _, t in lines[k:k + window])
            if sum(len(t) for t in key) < 120:  # thin runs (short names, punctuation) are not code worth sharing
                continue
            seen[key].append((f, lines[k][0]))
    pairs: dict[tuple[Path, Path], tuple[str, str]] = {}
    for places in seen.values():
        if len(places) < 2 or len(places) > 8:
            continue
        for a in range(len(places)):
            for b in range(a + 1, len(places)):
                (fa, la), (fb, lb) = places[a], places[b]
                if fa == fb and abs(la - lb) < window:
                    continue
                key = (fa, fb) if fa != fb else (fa, Path(f"{fb}#{min(la, lb) // 50}"))
                pairs.setdefault(key, (f"{fa.relative_to(root)}:{la}", f"{fb.relative_to(root)}:{lb}"))
    return sorted(pairs.values())


def test_the_core_repeats_itself_in_few_places() -> None:
    runs = repeated_runs(sorted(p for m, p in SOURCES.items() if m.startswith("probe")))
    assert len(runs) <= MAX_REPEATS, runs


def test_the_repeat_check_finds_a_copied_function_and_not_a_distinct_one(tmp_path: Path) -> None:
    body = "".join(f"    value_{i} = compute_something_long(argument_{i}, other_argument_{i})\n" for i in range(8))
    (tmp_path / "one.py").write_text("def f():\n" + body)
    (tmp_path / "two.py").write_text("def g():\n" + body)
    (tmp_path / "three.py").write_text("def h():\n" + body.replace("compute", "measure"))
    found = repeated_runs([tmp_path / n for n in ("one.py", "two.py", "three.py")], root=tmp_path)
    assert found == [("one.py:2", "two.py:2")]


def test_a_checkout_runs_from_its_root_without_the_install() -> None:
    """`python -m warp_compile` in the checkout finds warp_compile/ before any install; the folders beside it are its
    subpackages (no site processing, so no editable finder: only the dependencies' directory on the path)."""
    import subprocess
    import sys
    import sysconfig

    env = {"PYTHONPATH": sysconfig.get_paths()["purelib"], "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-S", "-m", "warp_compile", "--version"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.startswith("warp-compile "), run.stderr
    where = subprocess.run([sys.executable, "-S", "-c", "import warp_compile.cli.app as a; print(a.__file__)"],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert where.stdout.strip() == str(ROOT / "cli" / "app.py"), where.stderr
