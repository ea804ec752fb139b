"""Emission speed (ops/s) and peak memory of one dataflow on the AttenIO machine.

Usage: python tools/measure_emission.py DATAFLOW SEQ_LEN HEAD_DIM [OP_LIMIT]
Counts the records of every chunk (stopping after OP_LIMIT when given); peak RSS is
getrusage's maximum resident set size of this process.
"""

from __future__ import annotations

import resource
import sys
import time

from tlm_models.dataflows import Workload, emit
from tlm_models.dataflows.reference_machine import attenio_machine


def main(argv: list[str]) -> int:
    name, n, d = argv[0], int(argv[1]), int(argv[2])
    limit = int(argv[3]) if len(argv) > 3 else 0
    start = time.perf_counter()
    trace = emit(name, Workload(n, d), attenio_machine())
    ops = 0
    for chunk in trace:
        ops += len(chunk)
        if limit and ops >= limit:
            break
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{name} N={n} d={d}: {ops:,} ops in {seconds:.1f} s = "
        f"{ops / seconds / 1e6:.1f} M ops/s, peak RSS {peak:.0f} MiB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
