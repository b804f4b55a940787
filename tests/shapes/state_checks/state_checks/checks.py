"""Check a predicate over body states; the predicate may be a wp.func or a plain Python callable."""

from __future__ import annotations

import numpy as np
import warp as wp
import warp.utils

DEVICE = "cpu"


def check_bodies(q, qd, name: str, predicate, indices=None) -> tuple[str, int, int]:
    if isinstance(predicate, wp.Function):
        fn = predicate
    else:
        fn = warp.utils.create_warp_function(predicate)[0]

    @wp.kernel(module="unique", enable_backward=False)
    def check(
        q: wp.array(dtype=wp.transform),
        qd: wp.array(dtype=wp.spatial_vector),
        idx: wp.array(dtype=int),
        bad: wp.array(dtype=int),
    ):
        t = wp.tid()
        j = idx[t]
        if fn(q[j], qd[j]):
            bad[t] = 0
        else:
            bad[t] = 1

    if indices is None:
        indices = np.arange(q.shape[0], dtype=np.int32)
    idx = wp.array(indices, dtype=int, device=DEVICE)
    bad = wp.zeros(idx.shape[0], dtype=int, device=DEVICE)
    wp.launch(check, dim=idx.shape[0], inputs=[q, qd, idx, bad], device=DEVICE)
    failed = int(bad.numpy().sum())
    return name, idx.shape[0] - failed, failed
