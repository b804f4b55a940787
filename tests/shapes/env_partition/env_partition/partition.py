"""Node partitions: mark the nodes an environment touches, whole-topology or subset."""

import numpy as np
import warp as wp

from .kcache import specialized_kernel
from .topology import CellSubset, QuadGrid, TriGrid

DEVICE = "cpu"


@wp.kernel
def summarize_marks(marks: wp.array(dtype=int), totals: wp.array(dtype=int)):
    n = wp.tid()
    if marks[n] != 0:
        wp.atomic_add(totals, 0, 1)
        wp.atomic_add(totals, 1, n)


class EnvPartition:
    def __init__(self, topo, subset=None):
        self.topo = topo
        self.subset = subset
        self.whole = subset is None

    def rebuild(self) -> tuple[int, float]:
        marks = wp.zeros(self.topo.node_count, dtype=int, device=DEVICE)
        if self.whole:

            @specialized_kernel(suffix=f"{self.topo.name}_envfirst", kernel_options={"max_unroll": 8})
            def mark_nodes(topo_arg: self.topo.Arg, marks: wp.array(dtype=int)):
                c = wp.tid()
                for k in range(wp.static(self.topo.nodes_per_cell)):
                    marks[self.topo.element_node(topo_arg, c, k)] = 1

            inputs = [self.topo.arg_value(), marks]
            dim = self.topo.cell_count
        else:

            @specialized_kernel(
                suffix=f"{self.subset.name}_{self.topo.name}_envfirst", kernel_options={"max_unroll": 8}
            )
            def mark_nodes(part_arg: self.subset.Arg, topo_arg: self.topo.Arg, marks: wp.array(dtype=int)):
                t = wp.tid()
                c = part_arg.cell_ids[t]
                for k in range(wp.static(self.topo.nodes_per_cell)):
                    marks[self.topo.element_node(topo_arg, c, k)] = 1

            inputs = [self.subset.arg_value(), self.topo.arg_value(), marks]
            dim = self.subset.cell_ids.shape[0]

        wp.launch(mark_nodes, dim=dim, inputs=inputs, device=DEVICE)
        totals = wp.zeros(2, dtype=int, device=DEVICE)
        wp.launch(summarize_marks, dim=marks.shape[0], inputs=[marks, totals], device=DEVICE)
        count, index_sum = (int(v) for v in totals.numpy())
        return count, index_sum / max(count, 1)


def run(cells: int, seed: int):
    rng = np.random.default_rng(seed)
    rows = []
    for topo in (QuadGrid(cells, cells), TriGrid(cells, cells)):
        chosen = np.sort(rng.choice(topo.cell_count, size=topo.cell_count // 5, replace=False)).astype(np.int32)
        whole = EnvPartition(topo)
        sub = EnvPartition(topo, CellSubset(chosen, DEVICE))
        results = []
        for _ in range(2):  # rebuilt twice: the second time the cache returns the same kernels
            results = [whole.rebuild(), sub.rebuild()]
        rows.append((topo.name, *results))
    return rows
