"""The `Vault` facade: the one object the CLI, watcher, scheduler, agent tools and MCP server use.

The constructor only checks that its folder is a vault (a stat or two); settings, SQLite,
Whoosh and the model load when first needed. The policy a search applies to the index
(freshen, heal) is the index layer's (index/upkeep.py), the checks and filters of a search
request the search layer's (search/request.py): the facade hands on.

A `Vault` may be bound to a scope (`vault.scope("org", "acme")`, see files/scopes.py): the
same methods, seeing only the scope's files and those of the scopes above it, and writing only
its own. Views of one vault share its index handles and unit table.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import re
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import clock
from .config import (
    CACHE_DIR,
    CONFIG_FILE,
    Config,
    find_vault_root,
    is_vault_folder,
    load_config,
)
from .errors import (
    ALLOW_HARDLINKS,
    HARD_LINKS,
    ArgumentError,
    GitNotInstalledError,
    LineRangeError,
    LineRangeSyntaxError,
    NotAVaultError,
    SessionInScopesError,
    UnreadableNoteError,
    VaultError,
    left_out_for_links,
)
from .files import (
    DAILY_DIR,
    DIARY_DIR,
    MAX_ENTRY_BYTES,
    MEMORY_FILE,
    AddReport,
    Layout,
    Scope,
    append_note,
    check_scope,
    fsutil,
    scope_text,
    template_dir,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from .capture import FlushReport, SessionInfo, UpdateQueue
    from .dream import DreamReport
    from .files import ManageReport
    from .index import Index, IndexReport, LinkInfo, Progress, ScopeInfo, SearchUpkeep, UpkeepState
    from .live import StopReport, Watcher, WatchReport
    from .search import ContextBlock, Filters, Searcher, SearchResults
    from .sessions import Continuation, Graph, PruneReport, Transcript, TranscriptReport
    from .transfer import ExportReport, ImportReport

log = logging.getLogger("vault_memory")

OPTIMIZED_WAIT = 30.0  # seconds prepare_search waits for the optimised query session
_LOCATION = re.compile(r"^(?P<path>.+?):(?P<start>\d+)(?:-(?P<end>\d+))?$")


@dataclass
class InitReport:
    root: Path
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    git_initialised: bool = False


@dataclass
class DoctorReport:
    """What `vault doctor` found and did: `findings` (each with its repair), and with
    `verify`, whether the index equals the files."""

    findings: list[Any] = field(default_factory=list)
    verification: Any = None

    @property
    def healthy(self) -> bool:
        return not self.findings and (self.verification is None or self.verification.equal)

    def to_dict(self) -> dict[str, Any]:
        return {
            "healthy": self.healthy,
            "findings": [dataclasses.asdict(f) for f in self.findings],
            "verification": None if self.verification is None else self.verification.to_dict(),
        }


@dataclass
class GetResult:
    path: str
    start_line: int
    end_line: int
    total_lines: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "total_lines": self.total_lines,
            "text": self.text,
        }


def parse_location(spec: str) -> tuple[str, int | None, int | None]:
    """`memory/2026-11-22.md:4-9` -> ("memory/2026-11-22.md", 4, 9); `path:7` -> (path, 7, 7).

    A range that is not one (`MEMORY.md:abc`, `:-3`, `:3-`) is a `LineRangeSyntaxError`, not a
    file name; a colon followed by a dot or a slash still belongs to the path."""
    match = _LOCATION.match(spec)
    if not match:
        path, colon, tail = spec.rpartition(":")
        if colon and path and not any(c in tail for c in "./\\"):
            raise LineRangeSyntaxError(spec, tail)
        return spec, None, None
    start = int(match["start"])
    end = int(match["end"]) if match["end"] else start
    return match["path"], start, end


class Vault:
    """A vault folder: Markdown files are the truth, `.vault/` is a rebuildable cache.

    `root` must be a vault (a folder holding vault.toml, MEMORY.md or memory/):
    `NotAVaultError` otherwise, and nothing is written. `create=True` makes a whole vault there
    first when it is none (`Vault.init`: the layout from the templates). The constructor
    looks at `root` and loads nothing else: settings, SQLite, Whoosh and the model load when
    first needed.

    `scope=("org", "acme")` binds it to a scope (as `Vault(root).scope("org", "acme")` does,
    but with handles of its own)."""

    def __init__(
        self,
        root: str | Path,
        overrides: dict[str, Any] | None = None,
        *,
        scope: Sequence[str] | None = None,
        create: bool = False,
    ) -> None:
        self.root = Path(root).expanduser().absolute()
        if not is_vault_folder(self.root):
            # Never half a vault: a mistyped path must not get a memory/ or a .vault/ of
            # its own from the first `add` or search.
            if not create:
                raise NotAVaultError(self.root)
            self.init(self.root)
        self._overrides = dict(overrides or {})
        #: Called as (phase, done, total) during long work (indexing) when no other progress
        #: callback is given; the CLI sets it to draw progress bars on a terminal.
        self.progress: Progress | None = None
        #: The bound scope (None: the whole vault); see `scope()`.
        self.scope_path: Scope | None = None if scope is None else check_scope(scope)
        self._owner: Vault | None = None  # whose index handles a view shares
        self._index_handle: Index | None = None
        self._searcher_handle: Searcher | None = None
        self._views: dict[Scope, Vault] = {}
        #: False: searches never create `.vault/`, write the unit table or repair the index
        #: (a search server's reader, live/watch.py: its writer keeps the cache, and a cache
        #: deleted under it must stay deleted).
        self.cache_writes = True

    @classmethod
    def discover(
        cls,
        explicit: str | Path | None = None,
        cwd: Path | None = None,
        overrides: dict[str, Any] | None = None,
    ) -> Vault:
        """The vault at `explicit`, else the nearest folder upward holding vault.toml."""
        return cls(find_vault_root(explicit, cwd), overrides)

    def __repr__(self) -> str:
        if self.scope_path is None:
            return f"Vault({str(self.root)!r})"
        return f"Vault({str(self.root)!r}, scope={self.scope_path!r})"

    def scope(self, *names: str) -> Vault:
        """A view of this vault bound to the scope `names` (below this view's own scope, if it
        is one): the same methods, on the files of `scopes/<names>/`. It sees its own files and
        those of the scopes above it, never a sibling's or a descendant's, and writes only its
        own. `vault.scope()` is the root scope alone. Views share this vault's index handles.

            alpha = vault.scope("org", "acme", "agent-alpha")
            alpha.add("Prefers short answers")   # scopes/org/acme/agent-alpha/memory/DATE.md
        """
        path = check_scope((*(self.scope_path or ()), *names))
        owner = self._owner or self
        view = owner._views.get(path)
        if view is None:
            view = type(self)(self.root, self._overrides, scope=path)
            view._owner = owner
            view.progress = owner.progress
            owner._views[path] = view
        return view

    @property
    def scope_name(self) -> str | None:
        """The bound scope as "org/acme" ("" for the root scope), None when unbound."""
        return None if self.scope_path is None else scope_text(self.scope_path)

    @cached_property
    def layout(self) -> Layout:
        """Where this vault keeps what (handed to the features instead of the facade)."""
        return Layout(self.config)

    @cached_property
    def config(self) -> Config:
        config = load_config(self.root, self._overrides, scope=self.scope_path)
        for message in config.warnings:
            log.warning(message)
        return config

    @property
    def cache_dir(self) -> Path:
        return self.root / CACHE_DIR

    @property
    def _index(self) -> Index:
        owner = self._owner or self
        if owner._index_handle is None:
            from .index import Index

            owner._index_handle = Index(owner.config, creates_cache=owner.cache_writes)
        return owner._index_handle

    @property
    def cache(self) -> Index:
        """The derived index in `.vault/` (store, keyword index, vectors) this vault and its
        scoped views share: for tools that inspect the cache itself (verify it, list the files
        it holds as hard links or as racy)."""
        return self._index

    def close(self) -> None:
        """Release open handles (SQLite, Whoosh), the shared ones of a view too, and close the
        update queue (flushing what waits in it, see `updates`). The vault can be used again
        afterwards."""
        updates = self.__dict__.pop("updates", None)
        if updates is not None:
            updates.close()
        owner = self._owner or self
        owner._searcher_handle = None
        if owner._index_handle is not None:
            owner._index_handle.close()
            owner._index_handle = None

    def clone(self) -> Vault:
        """Another `Vault` of the same folder, settings and scope, with handles of its own
        (for a reader or a job in another thread). No I/O until used."""
        return type(self)(self.root, self._overrides, scope=self.scope_path)

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the cache --------------------------------------------------------------------------

    def index(
        self,
        rebuild: bool = False,
        paths: list[str] | None = None,
        progress: Progress | None = None,
        lock_timeout: float = 60.0,
        spare_cores: bool = True,
    ) -> IndexReport:
        """Bring `.vault/` in line with the files (all, or only `paths`; a folder stands for
        the files under it); returns what changed. With `index.threads` left at 0, a run that
        embeds many texts on an idle machine uses a second onnxruntime thread
        (`spare_cores`; the watcher, which keeps its embedder for hours, passes False)."""
        return self._index.run(
            rebuild=rebuild,
            paths=paths,
            progress=progress or self.progress,
            lock_timeout=lock_timeout,
            spare_cores=spare_cores,
        )

    @property
    def _searcher(self) -> Searcher:
        owner = self._owner or self
        if owner._searcher_handle is None:
            from .search import RankSettings, Searcher

            settings = RankSettings(half_life_days=owner.config.search.half_life_days)
            owner._searcher_handle = Searcher(owner._index, settings)
            owner._searcher_handle.saves = owner.cache_writes
            owner._searcher_handle.on_server = owner.config.search.on_server
        return owner._searcher_handle

    @property
    def searcher(self) -> Searcher:
        """The searcher this vault and its scoped views share (its settings, its prepared
        readers), for tools that drive the search stages themselves."""
        return self._searcher

    def _rank_settings(self) -> Any:
        """The shared searcher's ranking, with this scope's half-life when it has its own."""
        settings = self._searcher.settings
        half_life = self.config.search.half_life_days
        if settings.half_life_days == half_life:
            return None
        return dataclasses.replace(settings, half_life_days=half_life)

    def search(
        self,
        query: str,
        limit: int | None = None,
        mode: str = "hybrid",
        since: dt.date | str | None = None,
        until: dt.date | str | None = None,
        within: str | None = None,
        kinds: tuple[str, ...] | list[str] = (),
        fresh: bool = True,
        via_watcher: bool = False,
        today: dt.date | None = None,
        deep: bool = False,
    ) -> SearchResults:
        """The units of the vault that best answer `query`, best first, each citing its
        `path:start-end`: a list of `Hit` whose `warnings` say why a search was less than
        asked for (keywords only while an embedding provider fails; also logged).

        query: a question or keywords, with Obsidian's search operators if wanted
        (`tag:#decision`, `path:projects/`, `[status:active]`, `"exact phrase"`, `-word`,
        `date:2026-11-01..2026-11-15`, `kind:daily` …: README "Using it with Obsidian"); they
        select the units the free text is ranked among. `QuerySyntaxError` for a query with
        operators that cannot be read; a plain question is searched as it is.
        mode: "hybrid" (default), "keyword" (no model needed) or "semantic".
        since/until: ISO dates bounding dated files (undated files are then left out); a
        dated line whose relative dates ("yesterday") name days inside is kept too.
        within: a vault-relative file or folder. kinds: memory, daily, note, diary (the dream
        diary is left out unless named here or by `within`).
        fresh: first index the few files changed since the last index (bounded).
        via_watcher: let a running `vault watch` answer (same hits, no model or index to
        load); searches here when none runs or it cannot answer.
        today: the day recency is measured from (default: the clock's, see `clock`).
        deep: a small local generative model first names the words an answer would use,
        which join the query's keywords (the `deep` extra; `DeepUnavailableError` without it).
        """
        from .search import record, search_request

        parsed, filters = search_request(
            self.layout, self.scope_path, query, mode, since, until, within, kinds
        )
        limit = limit or self.config.search.limit
        if via_watcher and today is None:  # a watcher keeps the deep mode's model loaded
            remote = self._search_via_watcher(query, limit, mode, filters, deep)
            if remote is not None:
                return remote
        if mode != "keyword" and parsed.text.strip():  # operators alone embed nothing
            self._index.prefetch_query_embedder()
        upkeep = self._upkeep()
        if fresh:
            upkeep.freshen()
        upkeep.check_mode(mode, lambda: self._searcher.has_vectors())
        hits = upkeep.healing(
            lambda use: self._searcher.search(
                parsed.text,
                limit=limit,
                mode=use,
                filters=filters,
                today=today,
                settings=self._rank_settings(),
                deep=deep,
            ),
            mode,
        )
        self._say_what_was_left_out(hits)
        record(self.cache_dir, hits)
        return hits

    def _say_what_was_left_out(self, hits: SearchResults) -> None:
        """Tell, with the hits and once on stderr, which files this view may see the index
        leaves out for their hard links (as its runs found them: no stat here)."""
        from .index import CorruptIndexError

        try:
            linked = sorted(p for p in self._index.hard_linked() if self.layout.sees(p))
        except (sqlite3.DatabaseError, CorruptIndexError, VaultError):
            return
        if linked:
            hits.warnings.append(left_out_for_links(linked))
            self._say_left_out(linked)

    def _say_left_out(self, paths: list[str]) -> None:
        """Warn that a read left out `paths` for their hard links, in one line, each file
        once (the index's runs, a search and the context block it feeds share the record)."""
        self._index.say_left_out(paths)

    def _search_via_watcher(
        self, query: str, limit: int, mode: str, filters: Filters, deep: bool = False
    ) -> SearchResults | None:
        """The hits of a running `vault watch`, None when none runs or it cannot answer."""
        from .live import watch_client
        from .search import Hit, SearchResults

        remote_warnings: list[str] = []
        found = watch_client.search(
            self.config,
            query=query,
            limit=limit,
            mode=mode,
            since=filters.since.isoformat() if filters.since else None,
            until=filters.until.isoformat() if filters.until else None,
            within=filters.within,
            kinds=list(filters.kinds),
            warnings=remote_warnings,
            **({"deep": True} if deep else {}),
            **({} if self.scope_path is None else {"scope": list(self.scope_path)}),
        )
        if found is None:
            return None
        for message in remote_warnings:
            log.warning("%s", message)
        return SearchResults([Hit(**hit) for hit in found], remote_warnings)

    def prepare_search(self, mode: str = "hybrid") -> None:
        """Load what a search needs (the unit table, and the query encoder unless `mode` is
        "keyword") so that the next search answers at full speed. Reads only; logs no hits."""
        if mode != "keyword":
            self._index.prefetch_query_embedder()
        self._searcher.prepare(mode)
        if mode != "keyword":
            encoder = self._index.query_embedder()
            if hasattr(encoder, "optimize"):
                encoder.optimize()
            if getattr(encoder, "optimizing", False):  # the fast session, not the first one
                encoder.optimized.wait(OPTIMIZED_WAIT)

    @cached_property
    def _upkeep_state(self) -> UpkeepState:
        from .index import UpkeepState

        return UpkeepState()

    def _upkeep(self) -> SearchUpkeep:
        """The freshen-and-heal policy of a search of this vault (index/upkeep.py)."""
        from .index import SearchUpkeep
        from .live import watch_client

        owner = self._owner or self
        return SearchUpkeep(
            self._index,
            self.scope_path,
            self.config.search.freshness_max_files,
            self.progress,
            self._upkeep_state,
            owner._upkeep_state,
            lambda: watch_client.settled(self.cache_dir),
            self._owned_searcher_reset,
            heals=owner.cache_writes,
        )

    def _owned_searcher_reset(self) -> None:
        owner = self._owner or self
        owner._searcher_handle = None

    def doctor(self, verify: bool = False) -> DoctorReport:
        """Check everything that can be damaged and repair it: appends and rewrites a killed
        process left half-done in the vault's files, dreams interrupted between their writes,
        every artefact of the cache (index/integrity.py); hard-linked files are reported.
        `verify` then proves the index equals the files (or lists the differences)."""
        from .index import Finding, heal_cache_shape, indexer, special_file_findings

        report = DoctorReport()
        report.findings += heal_cache_shape(self.cache_dir)  # first: the others lock in it
        for relpath, action in fsutil.recover_tree(self.root):
            report.findings.append(Finding(relpath, "a write was interrupted", action))
        report.findings += self._recover_dreams()
        self._owned_searcher_reset()
        report.findings += self._index.doctor()
        skipped: dict[str, str] = {}
        indexer.scan(self.root, skipped=skipped)
        report.findings += special_file_findings(skipped)
        for relpath, links in self._hard_linked():
            report.findings.append(
                Finding(
                    relpath,
                    f"{HARD_LINKS.format(links=links)}: left out of the index, neither read "
                    "nor written",
                    f"find its other names with `find . -samefile {relpath}` and remove the "
                    f"link if it is not meant; or {ALLOW_HARDLINKS}",
                )
            )
        if verify:
            report.verification = self._index.verify()
            if not report.verification.equal:  # repaired, then proved again
                report.findings += self._index.repair_differences(report.verification)
                report.verification = self._index.verify()
        self._owned_searcher_reset()
        return report

    def _recover_dreams(self) -> list[Any]:
        from .dream import recover_dream

        found = []
        for scope in self._dreamers():
            found += recover_dream(self._bound_to(scope).config)
        return found

    def _hard_linked(self) -> list[tuple[str, int]]:
        """The files of the vault left alone for their hard links (none when allowed)."""
        from .index import indexer

        linked: dict[str, int] = {}
        allow = self.config.security.allow_hardlinks
        indexer.scan(self.root, allow_hardlinks=allow, hard_linked=linked)
        return sorted(linked.items())

    # -- links ------------------------------------------------------------------------------

    def links(self, note: str) -> list[LinkInfo]:
        """The links of a note (a path, or a name as a `[[link]]` names it), in order, each
        with the file it leads to (`resolved`, None when none answers): wikilinks, embeds,
        Markdown links, links in properties, a canvas's file nodes."""
        from .index import links

        path, to = self._linked(note)
        return links.outgoing(self._index.store, to, path)

    def backlinks(self, note: str) -> list[LinkInfo]:
        """The links that lead to a note (or an attachment), with their line, from the files
        this vault (or its scope) may see."""
        from .index import links

        path, to = self._linked(note)
        return links.incoming(self._index.store, to, path, self.scope_path)

    def _linked(self, note: str) -> tuple[str, Any]:
        self._upkeep().freshen()
        to = self._index.link_targets(self.scope_path)
        given = note.strip()
        real, relpath = self.layout.resolve(given)  # refuses what the scope may not see
        if relpath != "." and real.is_file() and relpath in to:
            return relpath, to
        name = given.removeprefix("[[").removesuffix("]]").split("|", 1)[0].split("#", 1)[0]
        found = to.resolve(name, "") if name.strip() else None
        if found is None:
            raise VaultError(
                f"no file of the vault answers to {note!r}. Give its path, e.g. "
                "notes/people/Priya Raman.md, or its name as a [[link]] names it, e.g. "
                "'Priya Raman'."
            )
        return found, to

    def status(self) -> dict[str, Any]:
        """Files, units, embedded units, model, cache size, drift, queue, settings. Writes
        nothing. Bound to a scope: counts of what it sees, and `scope` (its own files and
        units)."""
        from .capture import queue_status
        from .index import status
        from .live import watcher_status

        info = status(self.config)
        info["queue"] = queue_status(self.cache_dir)
        info["settings"] = self.config.as_dict()
        info["settings_sources"] = dict(self.config.sources)
        info["watcher"] = watcher_status(self.cache_dir)
        return info

    def watch(
        self,
        dream: bool = True,
        quiet_ms: int | None = None,
        on_ready: Callable[[Watcher], None] | None = None,
        idle_minutes: float | None = None,
    ) -> WatchReport:
        """Keep `.vault/` in line with the files until SIGINT/SIGTERM, answer searches over a
        socket and run the dream schedule (unless `dream` is False). Blocks; see `watch.py`.
        `idle_minutes`: run as a search server (`[search] server = "auto"`): no dream, stop
        after that many minutes without a request or when `.vault/` is deleted."""
        from .live import Watcher

        # One watcher serves every scope of the vault: a view watches the whole vault.
        whole = self if self.scope_path is None else type(self)(self.root, self._overrides)
        return Watcher(
            whole,
            dream=dream and idle_minutes is None,
            quiet_ms=quiet_ms,
            idle_minutes=idle_minutes,
        ).run(on_ready)

    def stop_watcher(self, timeout: float | None = None) -> StopReport:
        """Ask the running `vault watch` of this vault to stop and wait (at most `timeout`
        seconds, default 30) until it has; a report that says so when none runs."""
        from .live import STOP_WAIT, stop_watcher

        return stop_watcher(self.cache_dir, STOP_WAIT if timeout is None else timeout)

    # -- creating ---------------------------------------------------------------------------

    @staticmethod
    def init(path: str | Path, git: bool = False) -> InitReport:
        """Create the vault layout at `path` from the templates. Never overwrites a file;
        running it again only adds what is missing."""
        root = Path(path).expanduser().absolute()
        if root.exists() and not root.is_dir():
            raise VaultError(f"{root} exists and is not a folder. Choose another path.")
        try:
            return Vault._init(root, git)
        except OSError as exc:
            raise VaultError(
                f"cannot create a vault at {root}: {exc.strerror or exc} "
                f"({exc.filename or root}). Choose a folder you can write."
            ) from None

    @staticmethod
    def _init(root: Path, git: bool) -> InitReport:
        root.mkdir(parents=True, exist_ok=True)
        report = InitReport(root)
        templates = template_dir() / "vault"
        files = {
            "MEMORY.md": MEMORY_FILE,
            "vault.toml": CONFIG_FILE,
            "gitignore": ".gitignore",
            "gitattributes": ".gitattributes",
        }
        for folder in (DAILY_DIR, DIARY_DIR):
            target = root / folder
            if target.is_dir():
                report.kept.append(folder + "/")
            else:
                target.mkdir()
                report.created.append(folder + "/")
        for source, name in files.items():
            target = root / name
            if target.exists() or target.is_symlink():
                report.kept.append(name)
                continue
            text = (templates / source).read_text(encoding="utf-8")
            try:
                fsutil.write_atomic(target, text, expected_sha256=None, relpath=name)
            except VaultError:  # appeared meanwhile: keep theirs
                report.kept.append(name)
                continue
            report.created.append(name)
        if git:
            report.git_initialised = _git_init(root)
        return report

    # -- writing ----------------------------------------------------------------------------

    def daily_path(self, day: dt.date) -> tuple[Path, str]:
        return self.layout.daily_path(day)

    def add(
        self,
        text: str,
        tags: tuple[str, ...] = (),
        when: dt.datetime | None = None,
        source: str = "note",
        session: str | None = None,
    ) -> AddReport:
        """Append an entry to the day's log under a `## HH:MM · source` heading, the tags
        (`decision`, `#project/alpha`) at the end of its last line."""
        return append_note(self.layout, text, tags, when, source, session)

    # -- reading ----------------------------------------------------------------------------

    def get(self, path: str, start: int | None = None, end: int | None = None) -> GetResult:
        """A file of the vault, or lines START-END of it (1-based, inclusive). Bound to a
        scope, only a file the scope may see (`ScopeAccessError` otherwise). A file with
        several hard links is refused (`HardLinkedError`) unless [security] allow_hardlinks."""
        real, relpath = self.layout.resolve(path)
        if real.is_dir():
            raise UnreadableNoteError(relpath, "is a folder; give a file path")
        note = fsutil.read_text(
            real, relpath, self.config.index.max_file_bytes, self.layout.allow_hardlinks
        )
        lines = fsutil.split_lines(note.text)
        total = len(lines)
        if start is None:
            return GetResult(relpath, 1, total, total, note.text)
        end = start if end is None else end
        if start < 1 or end < start or start > total:
            raise LineRangeError(relpath, start, end, total)
        end = min(end, total)
        text = "\n".join(lines[start - 1 : end]) + "\n"
        return GetResult(relpath, start, end, total, text)

    # -- agents -----------------------------------------------------------------------------

    def manage(
        self, content: str | None, action: str, id: str | None = None, *, force: bool = False
    ) -> ManageReport:
        """Create, update or delete one entry of MEMORY.md or a daily log.

        action "create": append `content` to today's log (id None), to MEMORY.md's `## Inbox`
        (id "MEMORY.md") or to a section (id "MEMORY.md#Preferences"). "update" / "delete":
        `id` names the entry as `path#L12`, `path:12` or its sha256 (a unique prefix of 6+
        hex digits). Rewrites are atomic and guarded by the hash read (`NoteChangedError` if
        the file changed meanwhile). Deleting a `#pin` entry needs `force=True`.
        Details: vault_memory/manage.py.
        """
        from .files import Manager

        return Manager(self.layout, MAX_ENTRY_BYTES).run(content, action, id, force)

    def context(self, max_tokens: int = 2000, query: str | None = None) -> str:
        """A block for a system prompt: MEMORY.md, today's and yesterday's logs and, with a
        query, the most relevant hits not already shown, within `max_tokens` (counted offline
        by the bundled tokenizer). A cut MEMORY.md is announced in the block. A file with
        several hard links is left out (with a warning) unless [security] allow_hardlinks."""
        return self.context_block(max_tokens, query).text

    def context_block(
        self, max_tokens: int = 2000, query: str | None = None, today: dt.date | None = None
    ) -> ContextBlock:
        """`context` with what went in: parts, notices, token count (for `--json`)."""
        from .search import build_context

        return build_context(
            self.layout, self.search, max_tokens, query, today, left_out=self._say_left_out
        )

    # -- dreaming ---------------------------------------------------------------------------

    def _dreamers(self) -> list[Scope]:
        """The scopes `dream_scopes` considers: every scope of an unbound vault, the root
        first; a bound view's own scope only (it writes nothing else)."""
        if self.scope_path is not None:
            return [self.scope_path]
        return [(), *self._scope_folders()]

    def _bound_to(self, scope: Scope) -> Vault:
        return self if scope == self.scope_path else self.scope(*scope)

    def dream_schedules(self) -> dict[tuple[str, str], list[Scope]]:
        """(dream.schedule, dream.timezone) -> the scopes (the root () included) that dream on
        it, of those whose dreaming is enabled. A scope's own vault.toml may change both."""
        groups: dict[tuple[str, str], list[Scope]] = {}
        for scope in self._dreamers():
            settings = self._bound_to(scope).config.dream
            if settings.enabled:
                groups.setdefault((settings.schedule, settings.timezone), []).append(scope)
        return groups

    def dream_scopes(self, schedule: tuple[str, str] | None = None) -> dict[str, DreamReport | str]:
        """Dream every scope that has new entries in its daily logs (the root included),
        each into its own MEMORY.md with its own diary entry; with `schedule`, only the scopes
        that dream on it (see `dream_schedules`). Scopes with nothing new write nothing. A
        scope whose dream fails is reported (its error message) and the others still dream.
        What `vault watch` runs on a schedule."""
        groups = self.dream_schedules()
        chosen = (
            groups.get(schedule, [])
            if schedule is not None
            else [s for members in groups.values() for s in members]
        )
        done: dict[str, DreamReport | str] = {}
        for scope in sorted(chosen):
            try:
                done[scope_text(scope)] = self._bound_to(scope).dream()
            except VaultError as exc:
                log.warning("the dream of %s failed: %s", scope_text(scope) or "the root", exc)
                done[scope_text(scope)] = str(exc)
        return done

    def dream(
        self,
        dry_run: bool = False,
        force: bool = False,
        lookback_days: int | None = None,
        *,
        now: dt.datetime | None = None,
    ) -> DreamReport:
        """Consolidate the daily logs of the last `lookback_days` into MEMORY.md and append a
        diary entry to dreams/DATE.md. Safe to call with no arguments from a
        background thread. `dry_run` computes the diff and writes nothing; `force` applies a
        result that drops over 25% of the entries or exceeds the size budget. Raises
        `DreamDisabledError` (nothing done) when [dream] enabled = false, except for a dry run."""
        from .dream import Dreamer

        return Dreamer(self.config, lambda: self._index.writer_lock(), now).dream(
            dry_run=dry_run, force=force, lookback_days=lookback_days
        )

    def undo_dream(self, *, now: dt.datetime | None = None) -> DreamReport:
        """Restore MEMORY.md byte for byte as it was before the last dream that changed it, and
        record the undo in the diary. Works without git; works while dreaming is disabled."""
        from .dream import Dreamer

        return Dreamer(self.config, lambda: self._index.writer_lock(), now).undo()

    # -- flushing conversations -------------------------------------------------------------

    def flush(
        self,
        messages: str | bytes | list[Any] | dict[str, Any],
        session: str | None = None,
        dry_run: bool = False,
        date: dt.date | str | None = None,
        *,
        transcript: bool = True,
    ) -> FlushReport:
        """Append what is worth remembering from a conversation to the day's log, under
        `## HH:MM · flush · session ID`, with secrets redacted.

        messages: OpenAI-style message dicts (tool calls and tool results included), or raw
        text: a JSON list, {"messages": [...]}, JSONL, or a `User: … / Assistant: …`
        transcript. session: the conversation's id (default: derived from how it opens).
        Idempotent: entries the session already has in any daily log are not written again,
        so flushing a longer version of a conversation appends only what is new; nor are
        entries any other session flushed within `[flush] dedupe_days` (7) of the day.
        dry_run: compute the report (with the block as `text`) and write nothing.
        date: the day whose log receives the entries (default today).
        transcript: also append the messages to the session's transcript (sessions/, see
        `record_transcript`; `[sessions] transcripts = false` turns that off everywhere).
        """
        from .capture import flush_conversation
        from .sessions import conversation_session, transcript_for_flush, turns_from

        read: list[Any] = []  # the conversation as a transcript holds it, read once

        def turns(parsed: list[Any]) -> list[Any]:
            if not read:
                read.append(turns_from(messages, parsed))
            return list(read[0])

        def identify(parsed: list[Any]) -> str | None:  # one session per conversation
            return conversation_session(self.layout, turns(parsed))

        def record(parsed: list[Any], session_id: str, when: dt.datetime) -> Any:
            return transcript_for_flush(
                self.layout, messages, parsed, session_id, when, turns=turns(parsed)
            )

        return flush_conversation(
            self.layout,
            messages,
            session=session,
            dry_run=dry_run,
            date=date,
            record=record if transcript else None,
            identify=identify,
        )

    @cached_property
    def updates(self) -> UpdateQueue:
        """The update queue: `submit(messages, session=…)` returns at once (one append to a
        spool in `.vault/queue/`); a worker thread flushes each session once it has been quiet
        for `[queue] debounce_seconds`, and a process that dies loses nothing (the next queue,
        or `vault watch`, flushes what it left). Also `asubmit`, `flush_now`, `close`. Errors
        go to the log and `vault status`, never to the caller. See capture/queue.py."""
        from .capture import UpdateQueue

        return UpdateQueue(self)

    def sessions(self) -> list[SessionInfo]:
        """The flushed sessions found in the daily logs, the most recent first: the scope's
        own when bound, every scope's (root included) when not."""
        from .capture import group_sessions

        return group_sessions(self._session_blocks(None))

    def session(self, session_id: str) -> SessionInfo:
        """One flushed session with its blocks and entries."""
        from .capture import SessionNotFoundError, group_sessions

        found = group_sessions(self._session_blocks(session_id.strip()))
        if not found:
            raise SessionNotFoundError(session_id)
        if len(found) > 1:
            raise SessionInScopesError(session_id, [info.scope or "" for info in found])
        return found[0]

    def _session_blocks(self, session_id: str | None) -> list[Any]:
        from .capture import scan_sessions

        layouts = [self.layout]
        if self.scope_path is None:
            layouts += [self.scope(*s).layout for s in self._scope_folders()]
        max_bytes = self.config.index.max_file_bytes
        return [
            block
            for layout in layouts
            for block in scan_sessions(
                self.root,
                max_bytes,
                session_id,
                folder=layout.daily_dir,
                allow_hardlinks=self.config.security.allow_hardlinks,
            )
        ]

    # -- transcripts: sessions/ --------------------------------------------------------------

    def _transcript_folders(self) -> list[str]:
        """The sessions/ folders this view reads: its own (every scope's when unbound)."""
        from .sessions import SESSIONS_DIR

        layouts = [self.layout]
        if self.scope_path is None:
            layouts += [self.scope(*s).layout for s in self._scope_folders()]
        return [layout.prefix + SESSIONS_DIR for layout in layouts]

    def transcripts(self) -> list[Transcript]:
        """The transcripts (sessions/) this view reads, their frontmatter only (no
        messages), the one updated last first."""
        from .sessions import transcript_files, transcript_head

        heads = [
            transcript_head(path, relpath, name, day)
            for folder in self._transcript_folders()
            for path, relpath, name, day in transcript_files(
                self.root, folder, self.config.security.allow_hardlinks
            )
        ]
        return sorted(heads, key=lambda t: (t.updated, t.path), reverse=True)

    def transcript(self, session: str = "last") -> Transcript:
        """The transcript of a flushed conversation (`sessions/DATE-ID.md`) read back: its
        messages, redacted, with their `parent:` threads. "last": the one updated last."""
        from .sessions import locate_transcript, read_transcript

        allow = self.config.security.allow_hardlinks
        relpath = locate_transcript(self.root, self._transcript_folders(), session, allow)
        return read_transcript(self.root, relpath, self.config.index.max_file_bytes, allow)

    def record_transcript(
        self,
        messages: str | bytes | list[Any] | dict[str, Any],
        session: str | None = None,
        *,
        threads: str | None = None,
        when: dt.datetime | None = None,
    ) -> TranscriptReport:
        """Append a conversation to its session's transcript only (no daily-log entries):
        the messages the transcript does not hold yet, redacted, threaded as `threads`
        ("off", "embedding", "llm"; default `[sessions] threads`). `flush` does this too."""
        from .capture import check_session_id, derive_session_id, parse_conversation
        from .sessions import transcript_for_flush

        parsed = parse_conversation(messages)
        session_id = check_session_id(session) if session else derive_session_id(parsed)
        report = transcript_for_flush(
            self.layout, messages, parsed, session_id, when, threads, force=True
        )
        assert report is not None
        return report

    def continue_session(
        self,
        session: str = "last",
        max_tokens: int = 8000,
        *,
        summary_tokens: int | None = None,
        threaded: bool = False,
    ) -> Continuation:
        """A session picked up again: its newest messages within `max_tokens`, ready to
        resend as OpenAI-style messages, the older ones as the running summary a
        `ConversationWindow` builds (`.messages`). `threaded`: the current thread only."""
        from .search import load_counter
        from .sessions import MIN_BUDGET, continue_from

        if max_tokens < MIN_BUDGET:
            raise ArgumentError(
                "max_tokens", max_tokens, f" is too small; give at least {MIN_BUDGET} tokens."
            )
        return continue_from(
            self.transcript(session), max_tokens, load_counter(), summary_tokens, threaded
        )

    def graph(
        self,
        session: str | None = None,
        since: dt.date | str | None = None,
        limit: int | None = None,
    ) -> Graph:
        """What conversations left behind, as a graph (`.mermaid()`, `.markdown()`,
        `.to_dict()`): with `session`, its thread tree; else every session -> the daily
        entries it flushed -> the MEMORY.md items dreams promoted from them, and the
        [[wikilinks]] between notes. `since` and `limit` (nodes, default 200) keep it small;
        a cut graph says so."""
        from .sessions import DEFAULT_LIMIT, FlushedEntry, notes_in, session_graph, vault_graph

        day = clock.as_day(since, "since")
        limit = DEFAULT_LIMIT if limit is None else limit
        if limit < 1:
            raise ArgumentError("limit", limit, ": give 1 node or more.")
        if session is not None:
            return session_graph(self.transcript(session), day, limit)
        entries = [
            FlushedEntry(block.session, block.path, block.date, line, text)
            for block in self._session_blocks(None)
            for line, text in block.entries
        ]
        heads = self.transcripts()
        layouts = [self.layout]
        if self.scope_path is None:
            layouts += [self.scope(*s).layout for s in self._scope_folders()]
        return vault_graph(
            self.root,
            entries,
            heads,
            [la.memory_relpath for la in layouts],
            [la.diary_dir for la in layouts],
            notes_in(self.root, self.layout.sees),
            self.config.index.max_file_bytes,
            day,
            limit,
            self.config.security.allow_hardlinks,
        )

    def prune_sessions(self, older_than_days: int | str, dry_run: bool = False) -> PruneReport:
        """Delete the transcripts (sessions/) last updated more than `older_than_days` ago
        ("30d", "4w" or a number of days): never a daily log, MEMORY.md or any other file.
        In a git vault the deletion is one commit (`git revert` undoes it)."""
        from .sessions import parse_age, prune_transcripts

        days = older_than_days if isinstance(older_than_days, int) else parse_age(older_than_days)
        return prune_transcripts(
            self.root,
            self._transcript_folders(),
            days,
            dry_run,
            git_commit=self.config.dream.git_commit,
            allow_hardlinks=self.config.security.allow_hardlinks,
        )

    def prune_sessions_if_due(self) -> PruneReport | None:
        """`prune_sessions([sessions] keep_days)` once a day, when keep_days is set (what
        `vault watch` runs)."""
        from .sessions import prune_if_due

        keep = self.config.sessions.keep_days
        return prune_if_due(self.cache_dir, lambda: self.prune_sessions(keep), keep, clock.today())

    # -- import and export ------------------------------------------------------------------

    def export(
        self,
        out: Any,
        format: str = "jsonl",
        kinds: str | Sequence[str] | None = None,
        since: dt.date | str | None = None,
        until: dt.date | str | None = None,
    ) -> ExportReport:
        """Write the vault's Markdown to the text stream `out` as JSON records: a header (with
        the format versions), then for each file a file record (path, kind, scope, sha256)
        and one record per section (path, line range, date, heading, text, tags, kind, scope,
        session, sha256), then an end record. format: "jsonl" (one record a line) or "json"
        (one array). kinds: memory, daily, note(s), diary, session(s) (default all).
        since/until: only dated files of those days. A bound scope exports its own files.
        `import_history` of the result into an empty vault writes the same bytes back."""
        from .transfer import export_vault

        return export_vault(self.layout, out, format, kinds, since, until)

    def import_history(
        self,
        source: str | Path | Sequence[str | Path],
        format: str = "auto",
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> ImportReport:
        """Import a ChatGPT or Claude.ai data export (conversations.json, its folder or .zip),
        OpenAI-style messages (JSON/JSONL), or a `vault export` file. Conversations go
        through the flush (redacted, extracted, idempotent) into the log of the day they
        happened, titled; an export's files are written back byte for byte (never removing
        a line of the vault's). Importing twice adds nothing; a newer export adds only what
        is new. A file that is unreadable as a whole (unknown format, cut-off JSON) raises
        `ImportFormatError` before anything is written; a conversation that cannot be read is
        skipped and reported. format: auto, chatgpt, claude, openai, jsonl (an export),
        claude-code or codex (a coding agent's session files, or folders of them such as
        `~/.claude/projects` and `~/.codex/sessions`: each session dated by its own times,
        named by its own id, threaded, its tools told in a few words; a line that cannot be
        read is skipped and named in `bad_lines`). Several sources may be given at once.
        dry_run: report what would be added, write nothing. Each conversation is also kept
        as its transcript (sessions/, titled by its own title; see `record_transcript`)."""
        from .transfer import import_history

        return import_history(
            self.layout, source, format, dry_run, progress or self.progress, self._recorder
        )

    def _recorder(
        self, raw: Any, parsed: list[Any] | None, session: str, when: dt.datetime, title: str | None
    ) -> Any:
        """What an import keeps each conversation with: its transcript (sessions/)."""
        from .sessions import transcript_for_flush

        return transcript_for_flush(self.layout, raw, parsed, session, when, title=title)

    def follow_sessions(
        self,
        source: str | Path,
        format: str = "auto",
        *,
        stop: threading.Event | None = None,
        interval: float = 1.0,
        quiet: float | None = None,
        on_import: Callable[[ImportReport], None] | None = None,
        on_start: Callable[[str], None] | None = None,
    ) -> None:
        """Import a coding agent's sessions under `source` (claude-code or codex, a file or a
        folder such as `~/.claude/projects`) as they are written, until `stop` is set: every
        `interval` seconds, each session whose files changed and were then quiet for `quiet`
        seconds is imported again (only its new messages land). `on_import` gets each report;
        `on_start` the format, once the source is known to hold such sessions."""
        from .transfer import (
            AGENT_FORMATS,
            QUIET_SECONDS,
            NothingToFollowError,
            SessionFollower,
            agent_format,
        )

        path = Path(source).expanduser()
        fmt = agent_format(path) if format == "auto" else format
        if fmt not in AGENT_FORMATS:
            raise NothingToFollowError(path)
        follower = SessionFollower(
            self.layout, path, fmt, self._recorder, QUIET_SECONDS if quiet is None else quiet
        )
        stop = stop or threading.Event()
        if on_start is not None:
            on_start(fmt)
        while not stop.is_set():
            report = follower.poll()
            if report is not None and on_import is not None:
                on_import(report)
            stop.wait(interval)

    # -- scopes -----------------------------------------------------------------------------

    def _scope_folders(self) -> list[Scope]:
        """The scopes with a folder under scopes/ (whose names can be bound to)."""
        from .files import find_scopes, scopes

        return [s for s in find_scopes(self.root) if all(scopes.is_scope_name(name) for name in s)]

    def scopes(self) -> list[ScopeInfo]:
        """The scopes of the vault (those this view may see, when bound), the root first, with
        their files on disk and units in the index. Writes nothing."""
        from .index import list_scopes

        return list_scopes(self.config)


def _git_init(root: Path) -> bool:
    import subprocess

    if (root / ".git").exists():
        return False
    try:
        subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    except FileNotFoundError:
        raise GitNotInstalledError() from None
    except subprocess.CalledProcessError as exc:
        raise VaultError(
            f"git init failed: {exc.stderr.decode(errors='replace').strip()}"
        ) from None
    return True
