"""Shape c (kernels defined inside a function right after a late ``from ... import`` of the ``wp.func`` they
call), with d (a class-level cache in ``__new__`` keyed on the problem size) and i (a template function is
renamed through ``__name__``/``__qualname__`` before ``wp.kernel`` makes it a unique kernel).

Seen in newton-physics/newton, newton/_src/sim/ik/ik_lm_optimizer.py:741-1035 ``_build_specialized`` with the
cache in ``__new__`` at :155-176 (HEAD snapshot 41a5392c1): per (dof count, residual count) the solver class
renames a template to ``lm_solve_{dof}_{res}`` and makes it ``module="unique"``, imports joint helpers late
(a circular-import workaround), then defines one kernel in the file's default module and two more
``module="unique"`` kernels, and returns a specialised subclass.

Here: ``LMSolver(ndof, npoints, batch)`` does the same for a planar IK problem. ``joints.py`` imports a
constant from ``solver.py``, so ``solver.py`` imports it inside ``_specialize``. Two problem sizes are solved
one after the other, after a cost kernel in ``common.py`` ran: the second size's ``step_joints`` kernel joins
the solver file's module after it loaded (rebuilt), and each size makes two unique modules. Both sizes are
fixed in the program, so both specialisations could be made before the first solve.
"""

__version__ = "0.8.0"
