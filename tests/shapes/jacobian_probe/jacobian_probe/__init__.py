"""Shape b (a helper that defines kernel variant A or B in the branches of an ``if`` on its ``velocity``
argument), with g-n (the kernel captures a body index, an offset vector and a bool used in ``wp.static``).

Seen in newton-physics/newton, newton/examples/cloth/example_cloth_franka.py:83-130
``compute_body_jacobian`` (tag v1.0.0; removed at HEAD): the example's helper defines one ``@wp.kernel``
reading body twists or one reading body transforms, depending on ``velocity``; the kernel captures the body
index, an offset and ``with_rotation``, and is run under a ``wp.Tape`` to read the Jacobian row by row. The
kernels land in the example file's module, which already holds the example's other kernels.

Here: a four-link planar arm. ``body_jacobian`` is called three times (pose of body 3, pose of body 1,
velocity of body 3) after the module-level kinematics kernels ran, so each call adds a new kernel to this
file's loaded module and the module is built again. The three requests are fixed in the program.
"""

__version__ = "0.2.0"
