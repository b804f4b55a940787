"""Shape a (kernels put into a module chosen by the factory, passed as ``@wp.kernel(module=mod)``), with
d (``functools.cache`` keyed on a dtype) and e (one named module per precision).

Seen in newton-physics/newton, newton/_src/solvers/kamino/_src/linalg/factorize/rcm_batch.py:115-470
(HEAD snapshot 41a5392c1), caller at :528: a cached factory keyed on the matrix dtype gets
``wp.get_module(f"..._{dtype}")``, updates that module's options before anything loads, defines its
reordering kernels with ``module=`` that module, and returns them to the solver setup.

Here: ``reorder_bank(dtype)`` does the same for four kernels (float32 first, float64 later). A second cached
factory, ``gather_kernel(dtype)``, puts one more kernel into the same named module, but it is first called
after the bank's kernels ran, so each precision's module is built twice (compiled, then rebuilt with the late
kernel). Both factories take only the dtype, so everything could be created before the first launch.
"""

__version__ = "0.5.1"
