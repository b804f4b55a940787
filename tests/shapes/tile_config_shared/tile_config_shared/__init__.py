"""Shape a (a factory that files its kernels under a module it names itself, ``@wp.kernel(module=mod)``), with
d (``functools.cache`` keyed on numbers) and g-n (the block sizes captured as compile-time numbers).

Seen in newton-physics/newton, newton/_src/solvers/kamino/_src/solvers/fk/kernels.py:1473-1660
``create_2d_tile_based_kernels`` (HEAD snapshot 41a5392c1), called from the solver's ``finalize()`` at
fk/solver.py:685-701: a ``@cache`` factory keyed on two tile sizes gets the same fixed named module
(``__name__ + "_tile2d"``) for every size pair, updates its options and defines its kernels there.

Here: ``block_kernels(rows, cols)`` files three kernels (residual/Jacobian, Gram matrix, right-hand side)
under one fixed named module for every size pair; no tile ops, the sizes bound ``wp.static`` loops. Solver A
(4x4 blocks) is finalized and solved, then solver B (8x4) is finalized: its kernels join the named module
after it loaded, so the module is built again with all six kernels. Both size pairs are fixed in the
program, so both solvers could be finalized before the first solve.
"""

__version__ = "1.1.0"
