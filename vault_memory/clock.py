"""The one clock: every date and time the library writes into a file, a heading or a diary
comes from `now()`.

`VAULT_NOW` fixes it for a process, as an ISO 8601 date-time: `2026-11-22T09:30` (local wall
time) or `2026-11-22T09:30:00+14:00` (an instant, shown in the local zone). Tests, reproducible
runs and the replay of a past day use it; without it, the machine's clock. Durations (timeouts,
quiet periods) never come from here: they use `time.monotonic()`.
"""

from __future__ import annotations

import datetime as dt
import os

from .errors import ArgumentError, ConfigError

ENV = "VAULT_NOW"


def fixed() -> dt.datetime | None:
    """The date-time `VAULT_NOW` fixes, or None when the real clock runs."""
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return None
    try:
        return dt.datetime.fromisoformat(raw)
    except ValueError:
        raise ConfigError(
            f"{ENV}={raw!r} is not an ISO 8601 date-time; use e.g. 2026-11-22T09:30 or "
            f"2026-11-22T09:30:00+01:00, or unset {ENV} to use the real clock."
        ) from None


def now(tz: dt.tzinfo | None = None) -> dt.datetime:
    """Local wall time as a naive date-time (like `datetime.now()`), or aware in `tz`."""
    pinned = fixed()
    if pinned is None:
        return dt.datetime.now(tz)
    if tz is None:
        return pinned.astimezone().replace(tzinfo=None) if pinned.tzinfo else pinned
    return (pinned if pinned.tzinfo else pinned.astimezone()).astimezone(tz)


def now_local() -> dt.datetime:
    """Local time, aware of its UTC offset (for records that state their zone)."""
    return now().astimezone()


def today() -> dt.date:
    """The local date."""
    return now().date()


def zone(name: str, setting: str = "flush.timezone") -> dt.tzinfo | None:
    """The IANA time zone `name` ("Europe/Berlin"), None for "" (the machine's local zone);
    a `ConfigError` naming `setting` for a name that is no zone."""
    if not name.strip():
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(
            f"{setting} {name!r} is not a time zone; use an IANA name such as "
            'Europe/Berlin, or "" for the machine\'s local zone.'
        ) from None


def wall_time(when: dt.datetime | None, zone_name: str) -> dt.datetime:
    """`when` (default: `now()`; naive means local wall time) as naive wall time in the zone
    `zone_name` ("" leaves it as it is): the time a person there reads on their clock."""
    tz = zone(zone_name)
    if tz is None:
        return when if when is not None else now()
    if when is None:
        return now(tz).replace(tzinfo=None)
    aware = when if when.tzinfo is not None else when.astimezone()
    return aware.astimezone(tz).replace(tzinfo=None)


def as_day(value: dt.date | str | None, option: str = "date") -> dt.date | None:
    """A day given as a date or `YYYY-MM-DD` (None stays None); a malformed one is a
    `ArgumentError` naming the parameter it came from (`since='2026-13-01' is not a date`)."""
    if value is None or isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ArgumentError(option, value, " is not a date; use YYYY-MM-DD.") from None
