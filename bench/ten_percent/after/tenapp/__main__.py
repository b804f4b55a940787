import numpy as np
import warp as wp

from . import blur, stats

img = wp.array(np.random.default_rng(1).random((64, 64)).astype(np.float32), device="cpu")
tmp = wp.zeros_like(img)
out = wp.array(np.array([0.0, 0.0, -1e9, 1e9], dtype=np.float32), device="cpu")
bins = wp.zeros(16, dtype=wp.int32, device="cpu")
wp.launch(blur.blur_x, dim=img.shape, inputs=[img, tmp], device="cpu")
wp.launch(blur.blur_y, dim=img.shape, inputs=[tmp, img], device="cpu")
wp.launch(stats.moments, dim=img.shape, inputs=[img, out], device="cpu")
stats.precise()
wp.launch(stats.normalize, dim=img.shape, inputs=[img, out], device="cpu")
wp.launch(stats.histogram, dim=img.shape, inputs=[img, bins], device="cpu")
print(bins.numpy().tolist())
