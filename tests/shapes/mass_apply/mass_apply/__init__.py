"""Shape b (a function that defines different kernels in the branches of an ``if`` on a model attribute),
with f (the kernels are defined and launched on every call, inside the step loop) and g-n (the dense branch
captures a block size, and defines one kernel per size in a loop).

Seen in google-deepmind/mujoco_warp, mujoco_warp/_src/support.py:36-130 (commit 37b32aad), ``mul_m()``:
``if not m.opt.is_sparse`` an inner function defines a tiled kernel capturing the tile size and launches it,
and is called once per tile level; ``else`` two kernels (diagonal and off-diagonal parts) are defined and
launched. It runs on every physics step (erikfrey/mjx_warp PR #58 shows the module hashes cycling).

Here: ``apply_mass(model, x, out)`` multiplies by a block-diagonal mass matrix. In the dense branch the
block kernel captures the block size (2, then 3) and lives in this file's module next to a module-level
kernel, so that module flips between two contents twice per step (compiled on the first dense step, reloaded
from the kernel cache on every later one). The sparse branch defines both kernels before launching, so after
its first step it only pays Python work. The block sizes are fixed by the model.
"""

__version__ = "0.4.0"
