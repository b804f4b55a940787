"""Stream populations one site along their lattice direction on a periodic ring."""

import warp as wp

from .policy import SHIFTS, Policy, Q


class Stream:
    def __init__(self, policy: Policy):
        self.policy = policy
        self.func, self.kernel = self._construct()

    def _construct(self):
        store = self.policy.store
        Stored = wp.types.vector(length=Q, dtype=store)
        right = SHIFTS[1]

        @wp.func
        def pull(f: wp.array(dtype=Stored), i: int, n: int) -> Stored:
            out = Stored()
            out[0] = f[i][0]
            out[1] = f[(i - right + n) % n][1]
            out[2] = f[(i + right) % n][2]
            return out

        @wp.kernel
        def stream(f: wp.array(dtype=Stored), out: wp.array(dtype=Stored)):
            i = wp.tid()
            out[i] = pull(f, i, f.shape[0])

        return pull, stream
