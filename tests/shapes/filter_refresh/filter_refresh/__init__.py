"""Shape d keyed on a ``wp.func`` (a memoised kernel factory whose argument is a freshly made ``wp.func``),
with g-f (the kernel calls the captured function) and f (the factory is looked up on every step).

Seen in google-deepmind/mujoco_warp, mujoco_warp/_src/collision_driver.py:253-300, :421, :597-599, :688-690
(commit 3d77e67e): each broadphase step calls ``make_filter(mode)``, which defines a new ``wp.func``, and passes
it to a ``cache_kernel``-memoised factory of a ``module="unique"`` sweep kernel; the memo key hashes the new
function object, so it misses on every step and the kernel is declared again (unique-module dedup avoids a
recompile, the Python work is paid each step). Changed in 2377178f (#844) to key the factory on ints and call
``wp.static(make_filter(...))`` inside the kernel.

Here: a 15-step AABB broadphase whose filter mode changes at step 8. By default the memo is keyed on the new
function (misses every step, one unique module per mode); ``--fixed`` keys it on the mode integer, the #844
form. The modes are fixed by the scenario.
"""

__version__ = "0.5.0"
