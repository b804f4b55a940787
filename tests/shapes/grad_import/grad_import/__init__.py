"""Shape c (a kernel defined inside a function right after a late ``from ... import`` of the ``wp.func`` it
calls; the function has a custom gradient).

Seen in NVIDIA/warp, warp/tests/test_grad_customs.py:180-195 ``test_custom_import_grad`` (tag v1.8.0): the test
imports a ``wp.func`` that has a ``wp.func_grad`` from a sibling module inside the test function, defines a
kernel calling it, and runs it forward and backward under a ``wp.Tape``; the kernel joins the test file's
module, which earlier tests already loaded. Fixed in f060f5257 by hoisting the import and the kernel to
module scope.

Here: ``check_clip_grad`` and ``check_softabs_grad`` each import their function late and define their kernel
per call. The first of three rounds (prepare inputs with a module-level kernel, check clip, check softabs)
builds the checks module three times: for its own kernels, again when ``call_clip`` joins, again when
``call_softabs`` joins; the later rounds re-create identical kernels (Python work only). Nothing in the
kernels depends on run-time values.
"""

__version__ = "0.1.4"
