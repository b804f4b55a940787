"""Shape a (a factory that takes a ``module`` argument and passes it to ``@wp.kernel(module=...)``), with
g-f (a material's energy function captured by the kernel).

Seen in liblaf/apple, src/liblaf/apple/warp/fem/_base.py:197-375 (commit b7c4348e), with the material
classes in _arap.py:98-117 and _stable_neo_hookean.py:126-150: classmethod factories
``build_*_kernel(cls, density_fn, module="unique")`` each nest a generic kernel that calls the captured
per-material function, and every material class calls them in its class body, so importing the
materials creates one ``module="unique"`` module per (material, kernel) before anything runs.

Here: three materials x two kernels (energy, gradient), all made at import with the
factory's default ``module="unique"``, so the first evaluation builds six small modules for kernels
that never change. The kernels could share one module (they all exist before the first launch).
The original kernels are ``Any``-typed; these are typed float32, because on Warp 1.10 generic
``module="unique"`` kernels that differ only in a captured function share one module name
(NVIDIA/warp issue #1231) and would all run the first material's function.
"""

__version__ = "0.3.0"
