"""Relative dates pinned to the day they were said: "yesterday" in a daily log read months later,
or in MEMORY.md, no longer says when. The parser is the package's one (`relative_dates`);
these are the names capture has always used."""

from __future__ import annotations

from ..relative_dates import has_unresolved_relative_time, pin_dates, unpin_dates

__all__ = ["has_unresolved_relative_time", "pin_dates", "unpin_dates"]
