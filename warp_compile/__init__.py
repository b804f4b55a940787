"""warp-compile: measure, explain and fix Warp kernel compile time."""

from pathlib import Path as _Path

__version__ = "0.1.0"

# In a checkout, python run from its root finds this folder before the installed package; its subpackages are the
# top-level folders beside it (pyproject's package-dir), so they are looked up there too. An installed copy holds
# them inside this folder and is left as it is.
_HERE = _Path(__file__).resolve().parent
if not (_HERE / "probe").is_dir() and (_HERE.parent / "probe" / "__init__.py").is_file():
    __path__.append(str(_HERE.parent))  # noqa: F821 (a package's __path__)
