"""Settings: defaults < vault.toml < VAULT_* environment < flags, and vault discovery.

Every setting lives in a section dataclass; its environment variable is
`VAULT_<SECTION>_<FIELD>` (e.g. `VAULT_SEARCH_HALF_LIFE_DAYS=14`). `Config.sources` records
where each resolved value came from, so `vault status` can show it.

A scope (`scopes/org/acme/`) may hold a vault.toml of its own: for that scope and the scopes
below it, its [search], [dream], [llm] and [flush] values override the root's (the nearest
file wins; the environment and flags still win over every file). [index], [watch] and other
vault-wide sections are read from the root's vault.toml only.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError, NotAVaultError, VaultNotFoundError

CONFIG_FILE = "vault.toml"
CACHE_DIR = ".vault"
MEMORY_FILE = "MEMORY.md"  # the names that make a folder a vault (files/notes.py uses them)
DAILY_DIR = "memory"
DIARY_DIR = "dreams"
SCOPES_DIR = "scopes"  # scopes/org/acme/ holds the files of the scope ("org", "acme")
#: The embedding model that ships with the package (see index/embedder.py): the default.
BUNDLED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


@dataclass(frozen=True)
class IndexSettings:
    model: str = BUNDLED_MODEL  # a fastembed model name; "none" disables embeddings
    max_file_bytes: int = 5_000_000  # larger files are skipped with a warning
    batch_size: int = 32  # texts per model batch (per request with provider = "openai")
    threads: int = 0  # onnxruntime threads; 0 = chosen by measurement and load (see embedder)
    # Where vectors come from: "fastembed" (in-process, the default) or "openai" (any
    # OpenAI-compatible /v1/embeddings endpoint: Ollama, llama.cpp, vLLM, LM Studio, OpenAI).
    provider: str = "fastembed"
    base_url: str = ""  # provider = "openai": e.g. http://127.0.0.1:11434/v1
    api_key_env: str = ""  # the environment variable holding its API key, if it needs one
    dimensions: int = 0  # vector length to ask for and expect; 0 = the model's own
    timeout_seconds: float = 30.0  # per request (a query waits at most 5 s)
    # Where the index lives: "sqlite" (.vault/, the default) or "postgres" (a shared
    # PostgreSQL + pgvector server: dsn, or the environment variable dsn_env names)
    backend: str = "sqlite"
    dsn: str = ""
    dsn_env: str = ""
    vault_id: str = ""  # this vault's name on a shared server; "" = the vault folder's name
    # this checkout's name among the vault's clones on a shared server: each clone sees its
    # own files; "" = this machine's host name and the vault's folder
    clone_id: str = ""


@dataclass(frozen=True)
class SearchSettings:
    limit: int = 10
    half_life_days: float = 90.0
    freshness_max_files: int = 20  # files re-indexed inside a query when no watcher runs
    server: str = "off"  # "auto": a search starts a search server (live/watch_client.py)
    server_idle_minutes: float = 10.0  # the search server stops after this long unused
    # With [index] backend = "postgres": rank the candidates the server picks (its HNSW and
    # full-text indexes), true; or read the whole unit table into this process, false
    on_server: bool = True


@dataclass(frozen=True)
class DreamSettings:
    enabled: bool = True
    schedule: str = "30 3 * * *"
    timezone: str = ""  # empty = the machine's local zone
    lookback_days: int = 14
    max_memory_chars: int = 12_000
    git_commit: bool = True


@dataclass(frozen=True)
class LLMSettings:
    base_url: str = ""
    model: str = ""
    api_key_env: str = ""
    timeout_seconds: float = 60.0  # the whole call: every try and every wait between them
    max_retries: int = 4  # retries of a 429 or 5xx answer, after a back-off (see llm.py)
    max_retry_wait_seconds: float = 30.0  # the longest single wait (Retry-After included)


@dataclass(frozen=True)
class FlushSettings:
    max_input_bytes: int = 5_000_000  # a larger conversation is refused, nothing written
    max_entry_chars: int = 500  # an entry is cut at a sentence boundary below this
    llm_max_input_chars: int = 120_000  # longer conversations use the offline extraction
    dedupe_days: int = 7  # entries any session flushed within this many days are not rewritten
    # The zone a person's "today" is said in: the day of the log that flush, add and import
    # write to, and the day relative dates are resolved against. "" = the machine's zone.
    timezone: str = ""


@dataclass(frozen=True)
class WatchSettings:
    quiet_ms: int = 300  # `vault watch` applies changes once the files were quiet this long
    reconcile_minutes: float = 5.0  # and compares the whole vault with the index this often


@dataclass(frozen=True)
class QueueSettings:
    debounce_seconds: float = 5.0  # a session's submissions this close together: one flush
    max_delay_seconds: float = 60.0  # a session submitting without pause is flushed this often
    max_spool_mb: float = 64.0  # past this much spooled, the queue flushes without waiting
    close_timeout_seconds: float = 10.0  # how long `close()` (and exit) waits for flushes


@dataclass(frozen=True)
class SessionsSettings:
    transcripts: bool = True  # every flush also appends the conversation to sessions/
    keep_days: int = 0  # `vault watch` deletes transcripts older than this, daily; 0 keeps all
    # Which earlier message a new user message continues: "off" (the one before it), or
    # chosen when the topic changes, by "embedding" similarity or by the [llm] "model".
    threads: str = "off"
    thread_window: int = 20  # the recent messages a new one may continue
    thread_min_similarity: float = 0.35  # below this to the previous message: a topic change


@dataclass(frozen=True)
class SecuritySettings:
    # A file with more than one hard link may be another scope's file or one outside the
    # vault (a hard link is a second name of the same file; no path check can tell). Unless
    # this is true, such a file is neither indexed, read nor written by anything (CLI,
    # library, agent tools, MCP; scoped or not), and what left it out says so. True trusts
    # every hard link (a backup made of links, say): they are read, and a write still
    # replaces the file rather than writing through the link. The root's vault.toml only.
    allow_hardlinks: bool = False


SECTIONS: dict[str, type] = {
    "index": IndexSettings,
    "search": SearchSettings,
    "dream": DreamSettings,
    "llm": LLMSettings,
    "flush": FlushSettings,
    "watch": WatchSettings,
    "queue": QueueSettings,
    "sessions": SessionsSettings,
    "security": SecuritySettings,
}
#: What a scope's own vault.toml may set; the other sections are the whole vault's.
SCOPE_SECTIONS = ("search", "dream", "llm", "flush")


@dataclass(frozen=True)
class Config:
    root: Path
    index: IndexSettings = field(default_factory=IndexSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    dream: DreamSettings = field(default_factory=DreamSettings)
    llm: LLMSettings = field(default_factory=LLMSettings)
    flush: FlushSettings = field(default_factory=FlushSettings)
    watch: WatchSettings = field(default_factory=WatchSettings)
    queue: QueueSettings = field(default_factory=QueueSettings)
    sessions: SessionsSettings = field(default_factory=SessionsSettings)
    security: SecuritySettings = field(default_factory=SecuritySettings)
    sources: Mapping[str, str] = field(default_factory=dict)  # "search.limit" -> "vault.toml"
    warnings: tuple[str, ...] = ()
    #: The scope these settings are for: None for the whole vault (unbound), () for the root
    #: scope, ("org", "acme") for scopes/org/acme/ (see files/scopes.py).
    scope: tuple[str, ...] | None = None

    @property
    def cache_dir(self) -> Path:
        return self.root / CACHE_DIR

    def as_dict(self) -> dict[str, dict[str, Any]]:
        """The settings, to show: a password in `[index] dsn` is shown as ***."""
        shown = {name: dataclasses.asdict(getattr(self, name)) for name in SECTIONS}
        shown["index"]["dsn"] = hide_password(shown["index"]["dsn"])
        return shown


def hide_password(dsn: str) -> str:
    """A PostgreSQL DSN (URL or key=value) with its password replaced by ***."""
    import re

    dsn = re.sub(r"(://[^:/@?]*:)[^@/?]*@", r"\1***@", dsn)
    return re.sub(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)", r"\1***", dsn)


def _coerce(value: Any, target: type, key: str, origin: str) -> Any:
    """Convert a TOML or environment value to the field's type, or say clearly why not."""
    if target is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in {"1", "true", "yes", "on"}:
            return True
        if isinstance(value, str) and value.strip().lower() in {"0", "false", "no", "off"}:
            return False
    elif target is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
    elif target is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                pass
    elif target is str and isinstance(value, str):
        return value
    raise ConfigError(
        f"{origin}: {key} must be {target.__name__}, got {value!r}. Fix the value and retry."
    )


def _field_types(section_cls: type) -> dict[str, type]:
    types = {"int": int, "float": float, "bool": bool, "str": str}
    return {f.name: types[str(f.type)] for f in dataclasses.fields(section_cls)}


def read_toml(path: Path) -> dict[str, Any]:
    import tomllib  # only when settings are needed: keeps `vault --help` fast

    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}). Fix the file and retry.") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid UTF-8 (byte {exc.start}). Re-save it as UTF-8 and retry."
        ) from exc
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}.") from exc


def _scope_files(
    root: Path, scope: tuple[str, ...], warnings: list[str], allow_hardlinks: bool = False
) -> list[tuple[str, Any]]:
    """(vault-relative name, parsed TOML) of the vault.toml of each scope from the outermost to
    `scope` itself, those that exist. A file reached through a symlink, or with several hard
    links (unless `allow_hardlinks`), is not read: a scope's settings are its own folder's."""
    found = []
    real_root = os.path.realpath(root)
    for depth in range(1, len(scope) + 1):
        relpath = "/".join((SCOPES_DIR, *scope[:depth], CONFIG_FILE))
        path = root / relpath
        if not path.is_file():
            continue
        if os.path.realpath(path) != os.path.join(real_root, *relpath.split("/")):
            warnings.append(f"{relpath} is a symlink or lies behind one: not read")
            continue
        try:
            links = path.stat().st_nlink
        except OSError:
            continue  # gone since the look above
        if links > 1 and not allow_hardlinks:
            warnings.append(
                f"{relpath} has {links} hard links, so it may be another scope's file: not read "
                "(set [security] allow_hardlinks = true if every hard link in this vault is yours)"
            )
            continue
        data = read_toml(path)
        for name in data:
            if name in SECTIONS and name not in SCOPE_SECTIONS:
                warnings.append(
                    f"{relpath}: [{name}] holds settings of the whole vault; set them in the "
                    f"root's {CONFIG_FILE} (ignored here)"
                )
        found.append(
            (relpath, {k: v for k, v in data.items() if k in SCOPE_SECTIONS or k not in SECTIONS})
        )
    return found


def load_config(
    root: Path,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    scope: tuple[str, ...] | None = None,
) -> Config:
    """Resolve the settings of the vault at `root` (as seen by `scope`, when given: the
    vault.toml files of the scope and of the scopes above it override the root's).

    `overrides` are command-line flags as {"section.field": value}; None values are ignored.
    """
    environ = os.environ if environ is None else environ
    warnings: list[str] = []
    files = [(CONFIG_FILE, read_toml(root / CONFIG_FILE))]
    if scope:
        allow = _root_setting(files[0][1], environ, overrides, "security", "allow_hardlinks")
        files += _scope_files(root, scope, warnings, bool(allow))
    sources: dict[str, str] = {}
    sections: dict[str, Any] = {}
    for name, cls in SECTIONS.items():
        types = _field_types(cls)
        values: dict[str, Any] = {}
        for origin, data in files:
            table = data.get(name, {})
            if not isinstance(table, dict):
                raise ConfigError(f"{origin}: [{name}] must be a table. Fix the file and retry.")
            for key, raw in table.items():
                if key not in types:
                    warnings.append(f"{origin}: unknown setting {name}.{key} (ignored)")
                    continue
                values[key] = _coerce(raw, types[key], f"{name}.{key}", origin)
                sources[f"{name}.{key}"] = origin
        for key, typ in types.items():
            env_name = f"VAULT_{name.upper()}_{key.upper()}"
            if env_name in environ:
                values[key] = _coerce(environ[env_name], typ, f"{name}.{key}", env_name)
                sources[f"{name}.{key}"] = env_name
        for dotted, raw in (overrides or {}).items():
            section, _, key = dotted.partition(".")
            if section not in SECTIONS or key not in _field_types(SECTIONS[section]):
                raise ConfigError(f"unknown setting {dotted!r}.")
            if section == name and raw is not None:
                values[key] = _coerce(raw, types[key], dotted, "flag")
                sources[dotted] = "flag"
        sections[name] = cls(**values)
    for origin, data in files:
        for name in data:
            if name not in SECTIONS:
                warnings.append(f"{origin}: unknown section [{name}] (ignored)")
    return Config(root=root, sources=sources, warnings=tuple(warnings), scope=scope, **sections)


def _root_setting(
    data: Mapping[str, Any],
    environ: Mapping[str, str],
    overrides: Mapping[str, Any] | None,
    section: str,
    key: str,
) -> Any:
    """One setting of the whole vault as `load_config` resolves it (the root's vault.toml <
    the environment < a flag), before the scopes' files are read."""
    typ = _field_types(SECTIONS[section])[key]
    value = getattr(SECTIONS[section](), key)
    table = data.get(section, {})
    if isinstance(table, dict) and key in table:
        value = _coerce(table[key], typ, f"{section}.{key}", CONFIG_FILE)
    env_name = f"VAULT_{section.upper()}_{key.upper()}"
    if env_name in environ:
        value = _coerce(environ[env_name], typ, f"{section}.{key}", env_name)
    flag = (overrides or {}).get(f"{section}.{key}")
    return value if flag is None else _coerce(flag, typ, f"{section}.{key}", "flag")


def is_vault_folder(path: Path) -> bool:
    """vault.toml, MEMORY.md or a memory/ folder at the top of `path`."""
    return (
        (path / CONFIG_FILE).is_file()
        or (path / MEMORY_FILE).is_file()
        or (path / DAILY_DIR).is_dir()
    )


def find_vault_root(explicit: str | os.PathLike[str] | None, cwd: Path | None = None) -> Path:
    """The vault to use: `explicit` (from --vault or VAULT_PATH), else the nearest folder at or
    above `cwd` that holds vault.toml.

    An explicit path must be a vault too: `vault --vault ~/code search` must not index a whole
    source tree and leave `.vault/` in it. A vault holds vault.toml, or has the shape of one (a
    MEMORY.md or a memory/ folder of daily logs at its top: a vault made by hand or by another
    tool, whose settings are then the defaults).
    """
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_dir() or not is_vault_folder(path):
            raise NotAVaultError(path)
        return path.resolve()
    start = (cwd or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if (folder / CONFIG_FILE).is_file():
            return folder
    raise VaultNotFoundError(start)
