"""Operations on blocks of rows of the per-head N x d tensors, as every exact dataflow issues them.

Q blocks come in and are scaled by 1/sqrt(d), K and V tiles come in, O blocks are normalised
by the row sums and go out: the same records in Standard, FLAT, FlashAttention-2 and AttenIO.
"""

from __future__ import annotations

from collections.abc import Iterable

from tlm_models.dataflows.builder import DepRef, OpSink
from tlm_models.dataflows.setup import DataflowSetup
from tlm_models.trace.record import Broadcast, VectorOp


def load_rows(
    sink: OpSink,
    setup: DataflowSetup,
    name: str,
    dst: int,
    rows: int,
    *,
    head: int = 0,
    row0: int = 0,
    deps: Iterable[DepRef] = (),
) -> int:
    """Load rows ``row0 .. row0 + rows`` of tensor ``name`` of ``head`` to on-chip ``dst``."""
    row_bytes = setup.workload.head_dim * setup.elem_bytes
    src = setup.base(name, head) + row0 * row_bytes
    return sink.load(src, dst, rows, row_bytes, tensor=setup.tensor[name], deps=deps)


def store_o(
    sink: OpSink,
    setup: DataflowSetup,
    o: int,
    rows: int,
    *,
    head: int,
    row0: int,
    deps: Iterable[DepRef],
) -> int:
    """Store the on-chip O block to rows ``row0 .. row0 + rows`` of O of ``head``."""
    row_bytes = setup.workload.head_dim * setup.elem_bytes
    dst = setup.base("O", head) + row0 * row_bytes
    return sink.store(o, dst, rows, row_bytes, tensor=setup.tensor["O"], deps=deps)


def scale_q(
    sink: OpSink, setup: DataflowSetup, q: int, rows: int, deps: Iterable[DepRef] = ()
) -> int:
    """Q *= 1/sqrt(d) in place, so the score matmuls need no scaling."""
    w = setup.workload
    return sink.vector(
        VectorOp.MUL, q, q, rows, w.head_dim, bcast=Broadcast.SCALAR, scalar=w.scale, deps=deps
    )


def normalise_and_store_o(
    sink: OpSink, setup: DataflowSetup, o: int, rowsum: int, rows: int, *, head: int, row0: int
) -> int:
    """O /= l row by row, then O goes off-chip; returns the store."""
    d = setup.workload.head_dim
    norm = sink.vector(VectorOp.DIV, o, o, rows, d, src1=rowsum, bcast=Broadcast.ROW)
    return store_o(sink, setup, o, rows, head=head, row0=row0, deps=[norm])
