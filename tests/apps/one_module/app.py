"""A one-module Warp app: every kernel in one module, which sets enable_backward=False itself at import.

Used by tests/test_verdicts_real.py: with a single module the CPU precompiled header costs more to build than it
saves, and a `try --set enable_backward=False` changes nothing Warp compiles here (the module already says so).
"""
import warp as wp

wp.set_module_options({"enable_backward": False})


@wp.kernel
def smooth(x: wp.array(dtype=float), y: wp.array(dtype=float), s: float):
    i = wp.tid()
    v = x[i]
    for _ in range(4):
        v = wp.sin(v) * s + wp.cos(v * 2.0) - wp.sqrt(wp.abs(v) + 1.0)
    y[i] = v


@wp.kernel
def blend(x: wp.array(dtype=wp.vec3), y: wp.array(dtype=wp.vec3), w: float):
    i = wp.tid()
    a = x[i]
    m = wp.mat33(a[0], a[1], a[2], a[1], a[2], a[0], a[2], a[0], a[1])
    y[i] = wp.normalize(m * a + wp.cross(a, wp.vec3(w, 1.0, 0.5))) * wp.length(a)


def main() -> None:
    n = 1024
    x = wp.full(n, 0.5, dtype=float, device="cpu")
    y = wp.zeros(n, dtype=float, device="cpu")
    a = wp.full(n, wp.vec3(0.1, 0.2, 0.3), dtype=wp.vec3, device="cpu")
    b = wp.zeros(n, dtype=wp.vec3, device="cpu")
    wp.launch(smooth, dim=n, inputs=[x, y, 0.5], device="cpu")
    wp.launch(blend, dim=n, inputs=[a, b, 2.0], device="cpu")
    print("sum %.4f %.4f" % (float(y.numpy().sum()), float(b.numpy().sum())))


if __name__ == "__main__":
    main()
