"""Shape e (+d, i): per-dtype kernels made with `wp.Kernel(func=..., key=...)` from nested defs, cached by name.

Seen in NVIDIA/warp, warp/tests/test_arithmetic.py:42-70 (kernel_cache / getkernel(func, suffix=dtype.__name__))
with the register pre-pass of warp/tests/unittest_utils.py:463-465 (9934a4eb2): each check defines an
undecorated nested function closing over its dtype, turns it into a kernel with an explicit key through a
dict cache, and launches it; a pre-pass can call every check with `register_kernels=True` first, so all
kernels exist before the first launch.

Here the checks run int32, then float32, then float64; without `--register-first` each check's kernel joins
the already-loaded module of `checks.py`, which is built again for every new kernel. With `--register-first`
the same run builds it once.
"""

__version__ = "1.0.2"
