import warp as wp

from ltoapp.ops import blend

# start every run from a clean slate of linked device code
wp.clear_lto_cache()

a = wp.array([1.0, 2.0, 3.0, 4.0], dtype=float, device="cpu")
b = wp.zeros(4, dtype=float, device="cpu")
wp.launch(blend, dim=4, inputs=[a, 0.25, b], device="cpu")
print("blend %.3f" % float(b.numpy().sum()))
