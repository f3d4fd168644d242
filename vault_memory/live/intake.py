"""A watcher's event intake: watchdog reports file events, and its handler only turns them
into vault-relative paths and records them (planning.py decides when they are applied).

Atomic saves arrive as a move onto the target, git checkouts as deletes and creates; a folder
created, deleted or moved stands for every file under it. The deletion of `.vault/` (or of
its index or lock) is not a change of the vault but of its cache: it triggers a reconcile.
The kernel drops inotify events when its queue overflows, and watchdog only rebuilds its
watches: on Linux the observer's emitter reports the overflow, which triggers a reconcile.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

from ..config import CACHE_DIR
from ..index import IGNORED_DIRS, is_indexable
from .watch_client import LOCK_FILE

log = logging.getLogger("vault_memory")

CACHE_KEYS = {CACHE_DIR, f"{CACHE_DIR}/{LOCK_FILE}", f"{CACHE_DIR}/index.sqlite"}
GONE = {"deleted", "moved"}


def ignored_folder(relpath: str) -> bool:
    return any(part.startswith(".") or part in IGNORED_DIRS for part in relpath.split("/"))


def event_filter() -> list[type]:
    """The events worth a wake-up: not opens and reads (the indexer's own), not the
    "folder modified" that accompanies every file event."""
    from watchdog import events as ev

    kinds = [
        ev.FileCreatedEvent,
        ev.FileModifiedEvent,
        ev.FileDeletedEvent,
        ev.FileMovedEvent,
        ev.FileClosedEvent,
        ev.DirCreatedEvent,
        ev.DirDeletedEvent,
        ev.DirMovedEvent,
    ]
    attrib = getattr(ev, "FileAttribEvent", None)  # `touch` (watchdog >= 6)
    return kinds + ([attrib] if attrib else [])


def make_observer(on_overflow: Callable[[], None]) -> Any:
    """A watchdog observer; on Linux one whose inotify emitter calls `on_overflow` when the
    kernel reports IN_Q_OVERFLOW (watchdog itself only re-adds its watches)."""
    # watchdog warns when a new folder gets its watch twice (created while its parent's watch
    # was being added): harmless, and a RuntimeWarning in its reader thread would stop it
    # wherever warnings are errors.
    warnings.filterwarnings(
        "ignore", message="Callback with id .* already exists for watch", category=RuntimeWarning
    )
    if not sys.platform.startswith("linux"):
        from watchdog.observers import Observer

        return Observer()
    from watchdog.observers.inotify import InotifyEmitter, InotifyObserver

    class OverflowAwareEmitter(InotifyEmitter):
        def on_thread_start(self) -> None:
            super().on_thread_start()
            group = getattr(self, "_inotify", None)
            original = getattr(group, "on_queue_overflow", None)
            if original is None:
                log.warning(
                    "this watchdog version does not report inotify queue overflows; "
                    "lost events are found by the periodic reconcile only."
                )
                return

            def overflowed() -> None:
                original()
                on_overflow()

            group.on_queue_overflow = overflowed  # type: ignore[union-attr]

    observer = InotifyObserver()
    observer._emitter_class = OverflowAwareEmitter
    return observer


class Recorder:
    """The watchdog handler: turns events into vault-relative paths and records them."""

    def __init__(
        self, root: str, record: Callable[[set[str]], None], cache_gone: Callable[[], None]
    ) -> None:
        self.root = root.rstrip(os.sep)
        self.record = record
        self.cache_gone = cache_gone

    def dispatch(self, event: Any) -> None:
        found: set[str] = set()
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            path = os.fsdecode(raw)
            if not path.startswith(self.root + os.sep):
                continue
            relpath = path[len(self.root) + 1 :].replace(os.sep, "/")
            if relpath in CACHE_KEYS and raw is event.src_path and event.event_type in GONE:
                self.cache_gone()
            elif event.is_directory:
                if not ignored_folder(relpath):
                    found.add(relpath)
            elif is_indexable(relpath):
                found.add(relpath)
        if found:
            self.record(found)


class EventIntake:
    """watchdog watching the vault at `root` (its real path: inotify does not follow a
    symlinked folder): events go to `record`, the loss of the cache to `cache_gone`, an
    overflow of the kernel's queue to `overflowed`."""

    def __init__(
        self,
        root: str,
        record: Callable[[set[str]], None],
        cache_gone: Callable[[], None],
        overflowed: Callable[[], None],
    ) -> None:
        self.root = os.path.realpath(root)
        self.handler = Recorder(self.root, record, cache_gone)
        self.overflowed = overflowed
        self.observer: Any = None

    def start(self) -> None:
        self.observer = make_observer(self.overflowed)
        self.observer.schedule(self.handler, self.root, recursive=True, event_filter=event_filter())
        self.observer.start()

    def stop(self) -> None:
        if self.observer is not None:
            import contextlib

            with contextlib.suppress(Exception):
                self.observer.stop()
                self.observer.join(timeout=10)
