"""Which index backend `[index] backend` names, opened (backend.py is the interface).

The backends are imported when named: a vault on SQLite never imports psycopg.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..config import Config
    from .backend import Capabilities, IndexBackend


def _sqlite(config: Config, readonly: bool, create: bool) -> IndexBackend:
    from .store import Store

    return Store(index_file(config), readonly=readonly, create=create)


def _postgres(config: Config, readonly: bool, create: bool) -> IndexBackend:
    from .pgstore import PgStore, dsn_of

    settings = config.index
    return PgStore(
        dsn_of(settings.dsn, settings.dsn_env),
        settings.vault_id or config.root.name,
        config.cache_dir,
        readonly=readonly,
        clone=clone_name(config),
    )


def clone_name(config: Config) -> str:
    """This checkout's name among the clones of its vault on a shared server: `[index]
    clone_id`, else the machine's host name and the vault's folder (stable across runs and
    a deleted .vault/, distinct for two checkouts on one machine)."""
    import socket

    return config.index.clone_id or f"{socket.gethostname()}:{config.root}"


def _sqlite_capabilities() -> Capabilities:
    from .store import Store

    return Store.capabilities


def _postgres_capabilities() -> Capabilities:
    from .pgstore import PgStore  # psycopg is imported by its methods, not here

    return PgStore.capabilities


#: name -> (opens it, its capabilities): the backends are imported when named.
BACKENDS: dict[
    str,
    tuple[Callable[[Config, bool, bool], IndexBackend], Callable[[], Capabilities]],
] = {
    "sqlite": (_sqlite, _sqlite_capabilities),
    "postgres": (_postgres, _postgres_capabilities),
}


def backend_name(config: Config) -> str:
    """The backend `[index] backend` names (ConfigError for a name no backend has)."""
    name = config.index.backend.strip().lower() or "sqlite"
    if name not in BACKENDS:
        raise ConfigError(
            f'[index] backend is "sqlite" or "postgres", not {config.index.backend!r}.'
        )
    return name


def capabilities_of(config: Config) -> Capabilities:
    """The capabilities of the backend `config` names, without opening it; SQLite's for a
    name no backend has (`vault status` then shows the file in .vault/, and opening the
    backend, as `vault index` does, says what is wrong)."""
    name = config.index.backend.strip().lower() or "sqlite"
    return BACKENDS.get(name, BACKENDS["sqlite"])[1]()


def open_backend(config: Config, readonly: bool = False, create: bool = True) -> IndexBackend:
    """The index backend `[index] backend` names: the SQLite `Store` in `.vault/` (default)
    or the PostgreSQL server's `PgStore`. `create=False`: a local index file is opened,
    never created (a search server's reader)."""
    return BACKENDS[backend_name(config)][0](config, readonly, create)


def index_file(config: Config) -> Path:
    """Where a backend with `capabilities.local_file` keeps the index: `.vault/index.sqlite`."""
    return config.cache_dir / "index.sqlite"
