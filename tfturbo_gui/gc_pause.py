"""Full garbage collections wait while a run streams in.

A full (oldest-generation) collection scans every object that survived the
younger ones; while a run streams in, the events, arrays and plot items it
creates survive, and each full collection paused the UI thread for up to
~57 ms (benchmarks/gui_ingest.py: the last UI-loop gaps over 50 ms). While
any run streams, the oldest generation's threshold is raised so it is not
collected; the young generations are collected as usual (they are cheap), and
the saved thresholds come back when the last run ends, so collections resume
between runs, when nothing is being drawn live.
"""

from __future__ import annotations

import gc

STREAMING_OLDEST_THRESHOLD = 1_000_000  # young collections before a full one: none in any run

_streaming = 0
_saved: tuple[int, int, int] | None = None


def run_started() -> None:
    global _streaming, _saved
    if _streaming == 0:
        _saved = gc.get_threshold()
        gc.set_threshold(_saved[0], _saved[1], STREAMING_OLDEST_THRESHOLD)
    _streaming += 1


def run_ended() -> None:
    global _streaming
    if _streaming == 0:
        return
    _streaming -= 1
    if _streaming == 0 and _saved is not None:
        gc.set_threshold(*_saved)
