"""The one way tests wait for something another thread or process does: poll a condition until
it holds or a deadline passes. No fixed sleeps: a loaded machine makes any guess too short and an
idle one makes it too long."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

POLL_SECONDS = 0.01  # short against the waits (seconds); cheap since predicates are reads


def wait_until(predicate: Callable[[], T], timeout: float = 10.0, what: str = "the condition") -> T:
    """Call `predicate` until it returns something true and return that; fail, naming `what`,
    once `timeout` seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(POLL_SECONDS)
