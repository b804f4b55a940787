"""Shape f (+g-f, i): a check helper that turns a predicate into a warp function and defines a unique kernel per call.

Seen in newton-physics/newton, newton/examples/__init__.py:68-140 (41a5392c1), test_body_state: a predicate
given as a wp.func or as a Python lambda/function is turned into a warp function with
`wp.utils.create_warp_function`, captured by a kernel defined inside the helper with
`module="unique", enable_backward=False` (added in 6e42521ce, #3649), and launched over the body states.

Here `check_bodies` is called with four predicates after the bodies were integrated, so four unique
modules are built, one per predicate. On warp 1.10 the lambdas' names come from the salted `hash()`
(NVIDIA/warp #1696, fixed by PR #1733), so their modules change name in every process.
"""

__version__ = "0.3.2"
