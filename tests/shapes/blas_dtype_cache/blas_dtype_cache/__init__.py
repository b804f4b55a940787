"""Shape d (``functools.cache`` factories keyed on a dtype and on a block-type object), with e (one kernel per
precision) and g-t (the kernels capture the dtype and a block matrix type); the module-level kernels are
generic (h).

Seen in newton-physics/newton, newton/_src/solvers/kamino/_src/linalg/blas.py:122-145
``_make_masked_zero_kernel_1d(dtype)`` and :166-230 ``_make_block_sparse_matvec_kernel(block_type)`` (HEAD
snapshot 41a5392c1), called inside ``wp.launch(kernel=...(A.dtype), ...)`` at :1159 and :1223: the cached
factories define their kernels in the default module, i.e. blas.py's own module, which also holds the
module-level BLAS kernels, on first use of each dtype.

Here: a float32 phase runs the module-level segment kernels, then the masked zero and the block matvec for
float32; a second phase does the same in float64. Each first use adds a kernel (or a generic instance) to the
already loaded ``blas`` module, so it is built seven times (the generic ``segment_dot`` gets its float32
instance only after ``segment_sizes`` loaded the module). The two precisions and the block shape are fixed
in the program.
"""

__version__ = "0.2.7"
