"""A history reference the registry lacks: the release before the fix with the maintainers' change as a patch,
applied in the case's own cached venv. Real venvs (no pip: the package file is written in place) and the real
`patch` program; the newton cases' patched installs are exercised in the heavy tier (tests/test_history_newton.py).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from warp_compile.evals.history_env import _apply_patch, _key, site_packages
from warp_compile.probe.errors import UsageError

ORIGINAL = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"
CHANGED = "def f():\n    return 1\n\n\ndef g():\n    return 3\n"
DIFF = (b"--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -4,3 +4,3 @@\n \n def g():\n-    return 2\n+    return 3\n")


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    return where


def _install(venv: Path, text: str = ORIGINAL) -> Path:
    mod = site_packages(venv) / "pkg" / "mod.py"
    mod.parent.mkdir(exist_ok=True)
    mod.write_text(text, encoding="utf-8")
    return mod


def test_the_patch_changes_the_venvs_own_copy(venv):
    mod = _install(venv)
    _apply_patch(venv, DIFF, Path("maintainer.patch"))
    assert mod.read_text(encoding="utf-8") == CHANGED
    assert sorted(p.name for p in mod.parent.iterdir()) == ["mod.py"]  # no .orig / .rej left beside it


def test_a_patch_that_does_not_apply_is_one_line_and_changes_nothing(venv):
    other = ORIGINAL.replace("return 2", "return 5")
    mod = _install(venv, other)
    with pytest.raises(UsageError) as err:
        _apply_patch(venv, DIFF, Path("maintainer.patch"))
    assert "maintainer.patch does not apply" in str(err.value) and "\n" not in str(err.value)
    assert mod.read_text(encoding="utf-8") == other
    assert sorted(p.name for p in mod.parent.iterdir()) == ["mod.py"]
    # half of a two-file diff applying is a change too: the dry run refuses it before either file is touched
    mod2 = mod.parent / "two.py"
    mod2.write_text(ORIGINAL, encoding="utf-8")
    both = DIFF.replace(b"mod.py", b"two.py") + DIFF
    with pytest.raises(UsageError):
        _apply_patch(venv, both, None)
    assert mod2.read_text(encoding="utf-8") == ORIGINAL and mod.read_text(encoding="utf-8") == other


def test_a_patched_venv_is_its_own_cache_entry():
    reqs = ["newton==0.1.3", "warp-lang==1.10.1"]
    plain, patched = _key(reqs, sys.executable), _key(reqs, sys.executable, DIFF)
    assert plain != patched and "patched" in patched and "patched" not in plain
    assert _key(reqs, sys.executable, DIFF + b" ") != patched  # another diff, another venv
    assert _key(reqs, sys.executable, DIFF) == patched


def test_the_card_names_a_patched_reference_as_the_release_plus_its_patch():
    from warp_compile.evals.history import history_root, history_score
    from warp_compile.evals.scorer import load_cases

    case = next(c for c in load_cases(history_root()) if c.history is not None and c.history.reference_patch)
    score = history_score(case, None, None, None, 0.0, 0.0)
    assert score.after == f"{score.before} + {case.history.reference_patch}"
    plain = next(c for c in load_cases(history_root()) if c.history is not None and not c.history.reference_patch)
    assert "+" not in history_score(plain, None, None, None, 0.0, 0.0).after
