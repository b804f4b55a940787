"""Calibration: differentiates the energy with respect to positions (run rarely, not measured here)."""
import warp as wp
from fieldlib.kernels import relax
from fieldlib.sim import step

dst, _ = step()
dst.requires_grad = True
out = wp.zeros(1, dtype=float, device="cpu", requires_grad=True)
tape = wp.Tape()
with tape:
    wp.launch(relax, dim=len(dst), inputs=[dst, 0.5, out], device="cpu")
tape.backward(loss=out)
print("grad norm %.4f" % float((dst.grad.numpy() ** 2).sum() ** 0.5))
