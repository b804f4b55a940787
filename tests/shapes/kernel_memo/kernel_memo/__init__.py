"""Shape d (a hand-written memo decorator around kernel factories, keyed on ``hash`` of the arguments), with
g-n (the factories capture bools and branch on them with ``wp.static``) and f (the memo is consulted on every
step).

Seen in google-deepmind/mujoco_warp, mujoco_warp/_src/warp_util.py:148-166 ``cache_kernel`` (HEAD snapshot
f76464fa), used by mujoco_warp/_src/solver.py:1565-1588 ``_solve_init_dof`` and launched per step at
solver.py:3693: the decorator keys a module-level dict on the hashed arguments plus the factory's name; the
factory defines a ``module="unique"`` kernel that branches on ``wp.static(warmstart)``.

Here: ``init_accel(warm, sparse)`` and ``project_contacts(sparse)`` are memoised ``module="unique"`` factories
looked up on each of 30 steps; warm-starting switches on after step 10, so a new unique module is built in
the middle of the run, and every variant is its own module next to the solver file's module. All flag
values are known when the model is made, so the variants could be created up front and share a module.
"""

__version__ = "0.3.2"
