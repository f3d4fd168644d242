"""Stopping cleanly on Ctrl-C or SIGTERM: the signal only asks, and the work under way (an
import, a batch of index updates, a dream) ends whole before the loop that waits on the
event stops. A signal raised as KeyboardInterrupt in the middle of such work could land in a
finaliser, where Python prints and drops it, and the loop went on."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

STOPPING_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def stopping_on_signals(
    stop: threading.Event, said: Callable[[signal.Signals], None] | None = None
) -> Iterator[None]:
    """Within the block, SIGINT or SIGTERM sets `stop` (and tells `said` which came); a
    second one acts at once, as it would without this (its handler before the block is put
    back on the first). Handlers can be set only in the main thread: elsewhere the block
    runs with the signals as they are."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()
        if said is not None:
            said(signal.Signals(signum))
        signal.signal(signum, previous[signal.Signals(signum)])

    previous = {signum: signal.getsignal(signum) or signal.SIG_DFL for signum in STOPPING_SIGNALS}
    for signum in previous:
        signal.signal(signum, on_signal)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
