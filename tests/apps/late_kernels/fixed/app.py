"""Every kernel defined before the first launch: the module builds once."""
import warp as wp

x = wp.full(2048, 0.5, dtype=float, device="cpu")


@wp.kernel
def k0(x: wp.array(dtype=float), s: float):
    i = wp.tid()
    x[i] = wp.sin(x[i]) * s + wp.cos(x[i])


@wp.kernel
def k1(x: wp.array(dtype=float), s: float):
    i = wp.tid()
    x[i] = wp.sqrt(wp.abs(x[i]) + s) - wp.cos(x[i] * 2.0)


@wp.kernel
def k2(x: wp.array(dtype=float), s: float):
    i = wp.tid()
    x[i] = wp.exp(-wp.abs(x[i])) * s + wp.sin(x[i] * 3.0)


wp.launch(k0, dim=1024, inputs=[x, 0.5], device="cpu")
wp.launch(k1, dim=2048, inputs=[x, 0.5], device="cpu")
wp.launch(k2, dim=512, inputs=[x, 0.5], device="cpu")
print("sum %.4f" % float(x.numpy().sum()))
