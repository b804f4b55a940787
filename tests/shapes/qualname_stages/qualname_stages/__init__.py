"""Shape a (a kernel decorator with a ``module`` keyword that picks the module), with f (kernels defined
inside per-step functions, so they are re-created on every step) and i (the module name is computed from
the function's ``__qualname__``).

Seen in google-deepmind/mujoco_warp, mujoco_warp/_src/warp_util.py:90-139 (commit 37b32aad), ``kernel(f=None,
*, enable_backward=None, module=None)``: when no module is given, the decorator strips ``<locals>`` from the
kernel's ``__qualname__`` and calls ``wp.get_module("<python module>.<enclosing function>")``, so each step
function that defines kernels inside its body gets its own small Warp module; the support/forward/solver step
functions then re-define their kernels on every call.

Here: ``stage_kernel`` does the same; three step functions define their kernels on each of 20 steps. One of
them, ``keep_in_shells``, defines its kernel in a loop over two shell radii captured by value, so its
per-function module flips between two contents inside every step (compiled on step 1, reloaded from the
kernel cache twice per step after that). The radii are fixed by the model, so the kernels could be made once.
"""

__version__ = "0.2.0"
