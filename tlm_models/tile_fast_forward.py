"""Steady-state fast-forward across the tiles of a tiled platform (docs/models/tiles.md).

Sound only when the whole chip repeats: every tile emits the same loop (the same number of
iterations of the same kinds: balanced shares), and over tile 0's iterations the changes of
every statistic of the chip (every tile's replay, every component) repeat. A loop of several
regimes (approximate attention's key and query passes) is watched regime by regime, as on one
tile, and each regime's skip is taken on every tile. Tile 0's iteration
starts are watched (``FastForward`` on its control); each snapshot row carries all tiles'
replay statistics (``replay_tile<i>``). Once the chip repeats, the same iterations are skipped
on every tile: each tile's shortened trace is then the same loop with fewer iterations, and the
skipped periods' changes are added to every tile's statistics and the platform's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tlm_models.errors import SimulationError
from tlm_models.fast_forward import FastForward, FastForwardSettings, IterationControl
from tlm_models.growth_fast_forward import fast_forward_for


def unbalanced_reason(controls: Sequence[IterationControl | None]) -> str | None:
    """Why the tiles' loops cannot be skipped together (None when they can)."""
    if any(c is None for c in controls):
        return "the dataflow marks no loop iterations"
    first = controls[0]
    assert first is not None
    if first.shapes is not None and any(counts for _, counts in first.shapes):
        # Blocks that grow along a mask are skipped by linear growth, whose boundary
        # correction was validated on one tile only; loops of regimes that repeat
        # (approximate attention's passes) are skipped regime by regime on every tile.
        return "its blocks grow along a mask: on tiles it runs exactly"
    for tile, control in enumerate(controls):
        assert control is not None
        if control.total != first.total:
            return (
                f"tile {tile}'s loop ({control.total} iterations) differs from tile 0's "
                f"({first.total}): unbalanced shares run exactly"
            )
        if control.kinds != first.kinds:
            return (
                f"tile {tile}'s iterations differ in kind from tile 0's (e.g. masked blocks "
                "of other key ranges): shares of unlike blocks run exactly"
            )
    return None


@dataclass
class TileFastForward:
    """Watches tile 0's loop for the chip's steady state; skips it on every tile together."""

    controls: list[IterationControl]
    watcher: FastForward

    @staticmethod
    def of(controls: Sequence[IterationControl], settings: FastForwardSettings) -> TileFastForward:
        return TileFastForward(list(controls), fast_forward_for(controls[0], settings))

    def attach(self, session: Any) -> None:
        """Watches tile 0's replayer (select it before calling)."""
        self.watcher.attach(session)

    def poll(self) -> None:
        """Between kernel slices: the watcher decides on tile 0's snapshots; a planned skip
        starts after the iteration furthest ahead of any tile's emitter, on every tile. A loop
        of several regimes is skipped several times (``growth_fast_forward.py``): the watcher
        waits until every tile has taken the last skip, so that no tile's is replaced."""
        lead = self.controls[0]
        for control in self.controls[1:]:
            control.marks.clear()  # only tile 0's iteration starts are snapshotted
        if any(c.skip is not None for c in self.controls[1:]):
            return
        planned = lead.skip
        lead.next_fixed = max(c.next_fixed for c in self.controls)
        self.watcher.poll()
        if lead.skip is not None and lead.skip != planned:
            for control in self.controls[1:]:
                control.skip = lead.skip

    def apply(self, tiles: list[dict[str, Any]], platform: dict[str, Any]) -> dict[str, Any]:
        """Adds the skipped periods to every tile's replay tree and the platform's (in
        place); returns the result's ``fast_forward`` section."""
        skipped = {c.skipped for c in self.controls}
        if len(skipped) != 1:
            raise SimulationError(f"tiles skipped different iteration counts: {sorted(skipped)}")
        others = {f"replay_tile{i}": tree for i, tree in enumerate(tiles) if i}
        section = self.watcher.apply(tiles[0], platform, others)
        section["tiles_skipped_together"] = len(self.controls)
        return section
