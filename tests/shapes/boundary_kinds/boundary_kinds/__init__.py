"""Shape b (a method picks one of two ``wp.func`` rules with ``if``/``elif`` on ``self.kind``), with g-f (the
chosen function is captured by a kernel nested in the base class) and g-t (the storage dtype is captured from
``self``).

Seen in Autodesk/XLB, xlb/operator/boundary_condition/bc_zouhe.py:271-351 ``ZouHeBC._construct_warp`` with the
kernel built by xlb/operator/boundary_condition/boundary_condition.py:83-117 ``_construct_kernel(functional)``
(commit ba458b55): each boundary condition defines velocity and pressure functionals, selects one by
``self.bc_type``, and the base class nests a ``@wp.kernel`` capturing it, ``wp.uint8(self.id)`` and the store
dtype. Every boundary condition's kernel lands in the base class file's module, built in
``Operator.__init__``.

Here: three boundary conditions (inflow velocity, outflow pressure, lid velocity) are constructed and applied
one after another while the lattice is being set up; the base module has already loaded (its cell-count
kernel ran), so each new boundary adds a kernel and the module is built again. The list of boundaries is
fixed in the program.
"""

__version__ = "0.6.0"
