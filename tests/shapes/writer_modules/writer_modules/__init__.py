"""Shape a (a factory that computes a module name and passes it to ``@wp.kernel(module=...)`` and
``@wp.func(module=...)``), with g-f (the contact writer, a ``wp.func``, is captured by the kernel).

Seen in newton-physics/newton, newton/_src/geometry/narrow_phase.py:403-460
``create_narrow_phase_primitive_kernel`` (HEAD snapshot 41a5392c1), used at :1017-1040, :1571-1574 and
:1744-1760: the factory builds ``modname`` from the writer function's name and its boolean flags, defines a
helper ``wp.func`` and the contact kernel in that named module, and the kernel calls the captured writer.
The collision pipeline calls it when it is constructed.

Here: ``make_contact_kernel(writer, speculative)`` does the same for a sphere-sphere test; two writers x two
flags give four pipelines, all built at start-up, before any launch, and each lands in its own named module,
so the first collisions build four small modules. Every combination is fixed when the pipelines are made, so
the four kernels could share one module.
"""

__version__ = "0.7.0"
