"""Deep Dream, the apply step: read the vault, decide (`dream.py`), check, write, record, commit.

What a dream reads: MEMORY.md as it is on disk, the daily logs `memory/YYYY-MM-DD.md` of the
lookback window, and the diary's records (to know what earlier dreams consumed). Never the
diary's text, the archive or any other file. A dream of a scope (settings bound to one: see
files/scopes.py) reads and writes the same files in the scope's folder, `scopes/a/b/MEMORY.md`
and so on, and nothing of any other scope: text never moves across scopes.

What a dream writes, and nothing else: MEMORY.md (atomically, against the sha256 it read, so a
concurrent edit aborts it), the diary `dreams/YYYY-MM-DD.md` (a locked append), the archive
`dreams/archive.md` (entries moved out to respect the size budget) and a copy of the previous
MEMORY.md in `dreams/.backup/` (what `--undo` restores, with or without git). A dry run and a
disabled dream write nothing at all, not even `.vault/`. If any write fails, the ones before
it are rolled back.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import clock
from ..config import Config
from ..errors import ArgumentError, ConfigError, NoteChangedError, NoteNotFoundError, VaultError
from ..files import (
    DIARY_DIR,
    MEMORY_FILE,
    Layout,
    MemoryDoc,
    date_from_name,
    defang,
    fsutil,
    gitops,
    is_instruction,
    parse_memory,
    parse_note,
    plain_text,
)
from ..search import hitlog
from ..text import visible
from .checks import enforce, validate
from .decide import (
    DreamPlan,
    Item,
    Policy,
    Skipped,
    assess,
    consolidate,
    extract_items,
)
from .diary import DIARY_TITLE, Record, one_line, parse_records, render_entry
from .history import render, unified_diff
from .junk import junk_reason
from .similarity import EmbeddingSimilarity, Similarity, TokenSimilarity

log = logging.getLogger("vault_memory")

ARCHIVE_FILE = f"{DIARY_DIR}/archive.md"
JOURNAL_NAME = "pending.json"  # in dreams/.backup/: the writes of a dream under way
BACKUP_DIR = f"{DIARY_DIR}/.backup"
ARCHIVE_TITLE = (
    "# Archive\n\nEntries `vault dream` moved out of MEMORY.md to keep it within its size "
    "budget, newest last. A dream never reads this file.\n"
)

WriterLock = Callable[[], contextlib.AbstractContextManager[None]]


class DreamDisabledError(VaultError):
    def __init__(self) -> None:
        super().__init__(
            "dreaming is disabled ([dream] enabled = false in vault.toml); nothing was done. "
            "Set enabled = true, or dream once with VAULT_DREAM_ENABLED=true (a dry run, "
            "`dream(dry_run=True)`, previews it without writing)."
        )


class DreamRefusedError(VaultError):
    """The dream's result failed a guardrail or the model's reply was unusable."""

    def __init__(self, problems: list[str], forceable: bool = False) -> None:
        self.problems = problems
        self.forceable = forceable
        hint = (
            "See the diff with `dream(dry_run=True)`, and apply it anyway with `dream(force=True)`."
            if forceable
            else "Nothing was written; the next dream will try again."
        )
        super().__init__(
            "the dream was refused, MEMORY.md is unchanged: " + "; ".join(problems) + ". " + hint
        )


class UndoError(VaultError):
    """Nothing to undo, or undoing would lose something."""


@dataclass
class DreamReport:
    status: str  # dreamed | no-change | nothing-new | dry-run | undone
    message: str = ""
    dream_id: str | None = None
    dry_run: bool = False
    mode: str = "offline"  # offline | llm
    model: str | None = None
    similarity: str | None = None
    window: tuple[str, str] | None = None
    inputs: list[dict[str, Any]] = field(default_factory=list)
    new_entries: int = 0
    added: list[dict[str, Any]] = field(default_factory=list)
    merged: list[dict[str, Any]] = field(default_factory=list)
    archived: list[dict[str, Any]] = field(default_factory=list)
    edited: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    superseded: list[dict[str, Any]] = field(default_factory=list)  # entries moved to history
    refused_items: list[dict[str, Any]] = field(default_factory=list)  # parts left out, and why
    refused: list[str] = field(default_factory=list)  # dry run: what would be refused
    diff: str = ""
    memory_chars: tuple[int, int] = (0, 0)
    written: list[str] = field(default_factory=list)
    diary: str | None = None
    backup: str | None = None
    commit: str | None = None
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["window"] = list(self.window) if self.window else None
        data["memory_chars"] = list(self.memory_chars)
        return data


@dataclass
class _Inputs:
    memory_text: str
    memory_sha: str | None
    memory: MemoryDoc
    items: list[Item]
    files: list[tuple[str, str, int]]  # (path, sha256, items)
    consumed: set[str]


class Dreamer:
    """One vault's dreams. `writer_lock` is `Index.writer_lock` (shared with the indexer);
    `now` fixes the clock (tests, reproducible runs)."""

    def __init__(
        self, config: Config, writer_lock: WriterLock, now: dt.datetime | None = None
    ) -> None:
        self.config = config
        self.root = config.root
        self.writer_lock = writer_lock
        self._now = now
        self.layout = Layout(config)  # the scope's files, when the settings are bound to one
        self.links_ok = self.layout.allow_hardlinks  # else files with several links: refused
        self.memory_file = self.layout.memory_relpath
        self.archive_file = f"{self.layout.diary_dir}/archive.md"
        self.backup_dir = f"{self.layout.diary_dir}/.backup"
        # One dream at a time per MEMORY.md: scopes dream side by side (their schedules may
        # fall on the same minute), each under its own lock.
        lock = "dream.lock"
        if self.layout.scope:
            lock = f"dream-{fsutil.sha256_text(self.layout.prefix)[:12]}.lock"
        self.lock_path = config.cache_dir / lock

    # -- dreaming -------------------------------------------------------------------------------

    def dream(
        self, dry_run: bool = False, force: bool = False, lookback_days: int | None = None
    ) -> DreamReport:
        settings = self.config.dream
        if not settings.enabled and not dry_run:
            raise DreamDisabledError()
        days = settings.lookback_days if lookback_days is None else lookback_days
        if days < 1:
            raise ArgumentError("lookback_days", days, ": the lookback must be at least 1 day.")
        now = self.now()
        start = now.date() - dt.timedelta(days=days)
        inputs = self._read(start, now.date())
        if dry_run or not self._candidates(inputs):
            # Nothing new: nothing to lock, nothing written (not even `.vault/`).
            report = self._dream(now, start, inputs, dry_run=dry_run, force=force)
            if dry_run and not settings.enabled:
                report.warnings.append(
                    "dreaming is disabled ([dream] enabled = false): this "
                    "preview is all `vault dream` would show."
                )
                log.warning("%s", report.warnings[-1])
            return report
        with fsutil.lock_file(self.lock_path, "dream", timeout=0.5):
            self.recover()  # a dream a killed process left half-written comes first
            inputs = self._read(start, now.date())  # as they are now that no dream can run
            try:
                return self._dream(now, start, inputs, dry_run=False, force=force)
            except DreamRefusedError as exc:
                self._record_refusal(now, exc, inputs)
                raise

    @staticmethod
    def _candidates(inputs: _Inputs) -> list[Item]:
        return [i for i in inputs.items if i.key not in inputs.consumed]

    def now(self) -> dt.datetime:
        if self._now is not None:
            return self._now
        zone = self.config.dream.timezone.strip()
        if not zone:
            return clock.now_local()
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            return clock.now(ZoneInfo(zone))
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigError(
                f"[dream] timezone {zone!r} is not a known time zone; use a name such as "
                "Europe/Stockholm, or leave it empty for local time."
            ) from None

    def _dream(
        self, now: dt.datetime, start: dt.date, inputs: _Inputs, dry_run: bool, force: bool
    ) -> DreamReport:
        today = now.date()
        candidates = self._candidates(inputs)
        report = DreamReport(
            status="dry-run" if dry_run else "dreamed",
            dream_id=now.isoformat(timespec="seconds"),
            dry_run=dry_run,
            window=(start.isoformat(), today.isoformat()),
            inputs=[{"path": self.memory_file, "sha256": inputs.memory_sha}]
            + [{"path": p, "sha256": h, "new_entries": n} for p, h, n in inputs.files],
            new_entries=len(candidates),
            memory_chars=(len(inputs.memory_text), len(inputs.memory_text)),
        )
        if not candidates:
            report.status = "nothing-new"
            seen = len(inputs.items)
            report.message = (
                f"nothing new to dream about: the {seen} entries of the daily logs from "
                f"{start} to {today} were all consumed by earlier dreams. "
                f"{self.memory_file} is unchanged."
                if seen
                else f"nothing to dream about: no daily-log entries from {start} to {today}. "
                f"{self.memory_file} is unchanged."
            )
            return report

        policy = Policy(max_memory_chars=self.config.dream.max_memory_chars)
        similarity = self._similarity(report)
        hits = _scope_hits(hitlog.counts(self.config.cache_dir), self.memory_file)
        from ..llm import LLMClient

        client = LLMClient.from_config(self.config)
        if client is None:
            plan = consolidate(
                inputs.memory,
                candidates,
                policy,
                similarity,
                evidence=inputs.items,
                hits=hits,
                today=today,
            )
        else:
            report.mode = "llm"
            plan, report.model = self._ask_model(
                client, inputs, candidates, policy, similarity, hits, today
            )
        # The rules every plan passes, item by item, just before writing: what breaks one is
        # left out and listed in the diary, the rest applies.
        given = {i.source: i for i in plan.consumed}
        enforce(inputs.memory, plan, given, policy)
        new_text = render(inputs.memory, plan)
        problems = validate(inputs.memory, plan, new_text, policy, given, similarity)
        hard = [p.message for p in problems if not p.forceable]
        soft = [p.message for p in problems if p.forceable]
        if hard:
            raise DreamRefusedError(hard)
        if soft and not force and not dry_run:
            raise DreamRefusedError(soft, forceable=True)
        _describe(report, plan, inputs.memory_text, new_text, self.memory_file)
        if dry_run:
            report.refused = [] if force else soft
            report.message = (
                _summary(report, plan)
                + (
                    "; would be refused without --force: " + "; ".join(soft)
                    if report.refused
                    else ""
                )
                + ". Dry run: nothing was written."
            )
            return report
        self._apply(report, inputs, plan, new_text, now)
        return report

    def _similarity(self, report: DreamReport) -> Similarity:
        from ..index import ModelUnavailable, model_disabled, model_id_for, shared_embedder

        similarity: Similarity = TokenSimilarity()
        disabled = model_disabled()
        if model_id_for(self.config.index.model) and not disabled:
            try:
                embedder = shared_embedder(
                    self.config.index.model, self.config.index.threads or None
                )
                similarity = EmbeddingSimilarity(embedder)
            except ModelUnavailable as exc:
                report.warnings.append(f"{exc} Comparing entries by their words instead.")
                log.warning("%s", report.warnings[-1])
        report.similarity = similarity.name
        return similarity

    def _ask_model(
        self,
        client: Any,
        inputs: _Inputs,
        candidates: list[Item],
        policy: Policy,
        similarity: Similarity,
        hits: Any,
        today: dt.date,
    ) -> tuple[DreamPlan, str]:
        from ..llm import LLMError, parse_json_reply
        from .llm_plan import ReplyError, build_messages, plan_from_reply, select_inputs

        junk = [(i, junk_reason(i.text)) for i in candidates]
        live = [i for i, reason in junk if reason is None]
        scores = assess(live, policy, similarity, evidence=inputs.items, hits=hits, today=today)
        chosen = select_inputs(live, {k: v[0] for k, v in scores.items()})
        notes = {k: ", ".join(v[1]) for k, v in scores.items() if v[1]}
        junk_skipped = [
            Skipped(i.source, i.text, f"junk: {reason}") for i, reason in junk if reason
        ]
        if not chosen:  # only junk: nothing to ask
            return DreamPlan(skipped=junk_skipped, consumed=[i for i, _ in junk]), client.model
        messages = build_messages(inputs.memory, chosen, notes, policy)
        try:
            reply = client.chat(messages, json_mode=True, temperature=0.0)
            if reply.finish_reason == "length":
                raise DreamRefusedError(
                    [
                        "the model's reply was cut off (finish_reason "
                        "= length); use a model with a longer output limit"
                    ]
                )
            data = parse_json_reply(reply.text)
            plan = plan_from_reply(data, inputs.memory, chosen)
        except LLMError as exc:
            raise DreamRefusedError([str(exc)]) from None
        except ReplyError as exc:
            raise DreamRefusedError(
                [f"the model's proposal is unusable: {p}" for p in exc.problems]
            ) from None
        plan.skipped[:0] = junk_skipped
        plan.consumed = [i for i, reason in junk if reason] + chosen
        return plan, reply.model

    # -- reading -------------------------------------------------------------------------------

    def _read(self, start: dt.date, end: dt.date) -> _Inputs:
        max_bytes = self.config.index.max_file_bytes
        memory_path, _ = self.layout.resolve_own(self.memory_file)
        try:
            memory_file = fsutil.read_text(memory_path, self.memory_file, max_bytes, self.links_ok)
            memory_text, memory_sha = memory_file.text, memory_file.sha256
        except NoteNotFoundError:
            memory_text, memory_sha = "", None
        items: list[Item] = []
        files = []
        for relpath in self._dated(self.layout.daily_dir, start, end):
            try:
                real, _ = self.layout.resolve_own(relpath)
                note_file = fsutil.read_text(real, relpath, max_bytes, self.links_ok)
            except VaultError as exc:
                log.warning("%s (this daily log is left out of the dream)", exc)
                continue
            found = extract_items(parse_note(relpath, note_file.text))
            items.extend(found)
            files.append((relpath, note_file.sha256, len(found)))
        consumed: set[str] = set()
        for record in self._records(since=start):
            for keys in record.consumed.values():
                consumed.update(keys)
        files = [
            (p, h, sum(1 for i in items if i.path == p and i.key not in consumed))
            for p, h, _ in files
        ]
        return _Inputs(memory_text, memory_sha, parse_memory(memory_text), items, files, consumed)

    def _dated(self, folder: str, start: dt.date | None, end: dt.date | None) -> list[str]:
        """`folder/YYYY-MM-DD.md` files within [start, end], oldest first."""
        base = self.root / folder
        try:
            names = sorted(e.name for e in os.scandir(base) if e.is_file())
        except OSError:
            return []
        out = []
        for name in names:
            day = date_from_name(name)
            if day is None or (start and day < start) or (end and day > end):
                continue
            out.append(f"{folder}/{name}")
        return out

    def _records(self, since: dt.date | None = None) -> list[Record]:
        """Diary records, oldest first (a dream on day D can only consume logs up to D, so
        the records of the window's logs are in diary files dated within the window).

        Oldest by the instant each record states, not by file: a diary file is named by the
        date of its run's clock, and two runs whose clocks were in different zones (a dream
        at 03:30 UTC, its undo at 16:30 the day before in UTC-12) may file out of order."""
        records = []
        if since is not None:
            since -= dt.timedelta(days=1)  # a zone's date is at most a day from another's
        for relpath in self._dated(self.layout.diary_dir, since, None):
            try:
                real, _ = self.layout.resolve_own(relpath)
                text = fsutil.read_text(real, relpath, 50_000_000, self.links_ok).text
            except VaultError as exc:
                log.warning("%s (its dream records are skipped)", exc)
                continue
            records.extend(parse_records(relpath, text))
        return _chronological(records)

    # -- writing -------------------------------------------------------------------------------

    def _apply(
        self, report: DreamReport, inputs: _Inputs, plan: DreamPlan, new_text: str, now: dt.datetime
    ) -> None:
        """Write the dream: backup, archive, MEMORY.md, diary, in that order, with a journal
        (`dreams/.backup/pending.json`) written before the first change that names every
        write to come. A process killed at any point leaves a state that `recover_dream`
        (run before the next dream or undo, and by `vault doctor`) completes (MEMORY.md was
        replaced: the diary gets its record) or rolls back (it was not: the archive and the
        backup are taken back), so MEMORY.md is old or new with a diary that agrees."""
        memory_path, _ = self.layout.resolve_own(self.memory_file)
        diary_rel = self.layout.diary_relpath(now.date())
        undo: list[Callable[[], None]] = []
        written: list[str] = []
        record = Record("dream", report.dream_id or "", inputs.memory_sha, inputs.memory_sha)
        for item in plan.consumed:
            record.consumed.setdefault(item.path, []).append(item.key)
        with self.writer_lock():
            diary_path = self._prepare(diary_rel)
            journal = self._prepare(self.journal_file)
            try:
                if plan.changes_memory:
                    backup_rel = self._backup_name(now)
                    record.backup = report.backup = backup_rel
                    written.append(backup_rel)
                    record.memory_after = fsutil.sha256_text(new_text)
                if plan.archived:
                    record.archive = self._archive_state(plan, report.dream_id or "")
                    written.append(self.archive_file)
                if plan.changes_memory:
                    written.append(self.memory_file)
                else:
                    report.status = "no-change"
                report.message = _summary(report, plan) + "."
                entry = _diary_entry(report, plan, record, now, self.archive_file)
                written.append(diary_rel)
                fsutil.write_atomic(
                    journal,
                    json.dumps(
                        {
                            "id": record.id,
                            "memory_file": self.memory_file,
                            "before": inputs.memory_sha,
                            "after": record.memory_after,
                            "backup": record.backup,
                            "archive": record.archive,
                            "diary": diary_rel,
                            "entry": entry,
                            "written": written,
                            "commit": _commit_message(report, diary_rel),
                        }
                    ),
                    None,
                    self.journal_file,
                    self.links_ok,
                )
                undo.append(lambda: journal.unlink(missing_ok=True))
                fsutil.kill_point("dream.after-journal")
                if record.backup:
                    backup_path = self._prepare(record.backup)
                    fsutil.write_atomic(
                        backup_path, inputs.memory_text, None, record.backup, self.links_ok
                    )
                    undo.append(backup_path.unlink)
                    fsutil.kill_point("dream.after-backup")
                if plan.archived:
                    self._archive(plan, report.dream_id or "", undo)
                    fsutil.kill_point("dream.after-archive")
                if plan.changes_memory:
                    try:
                        fsutil.write_atomic(
                            memory_path,
                            new_text,
                            inputs.memory_sha,
                            self.memory_file,
                            self.links_ok,
                        )
                    except NoteChangedError:
                        raise NoteChangedError(self.memory_file, "the dream") from None
                    fsutil.kill_point("dream.after-memory")
                    undo.append(
                        lambda: self._restore(
                            memory_path,
                            inputs.memory_text,
                            inputs.memory_sha,
                            record.memory_after or "",
                        )
                    )
                fsutil.append_entry(
                    diary_path,
                    entry,
                    create_with=DIARY_TITLE.format(date=now.date().isoformat()),
                    allow_hardlinks=self.links_ok,
                )
                fsutil.kill_point("dream.after-diary")
            except BaseException:
                for step in reversed(undo):
                    with contextlib.suppress(Exception):
                        step()
                raise
            journal.unlink(missing_ok=True)
        report.written = written
        report.diary = diary_rel
        self._commit(report, written, _commit_message(report))

    @property
    def journal_file(self) -> str:
        return f"{self.backup_dir}/{JOURNAL_NAME}"

    def recover(self) -> list[str]:
        """Complete or roll back a dream that a killed process left between its writes (see
        `_apply`); what was done, one line each. Call under the dream lock."""
        journal_path, _ = self.layout.resolve_own(self.journal_file)
        try:
            data = json.loads(journal_path.read_bytes())
            before, after = data["before"], data["after"]
            diary_rel, entry = str(data["diary"]), str(data["entry"])
        except FileNotFoundError:
            return []
        except (OSError, ValueError, KeyError, TypeError):
            journal_path.unlink(missing_ok=True)  # torn: written before anything else
            return [f"removed the unfinished journal {self.journal_file}"]
        memory_path, _ = self.layout.resolve_own(self.memory_file)
        try:
            current: str | None = fsutil.sha256_bytes(memory_path.read_bytes())
        except FileNotFoundError:
            current = None
        done: list[str] = []
        with self.writer_lock():
            diary_path = self._prepare(diary_rel)
            if after is not None and current == after or after is None and current == before:
                # MEMORY.md is the dream's (or it changed nothing): the diary must say so.
                with fsutil.locked(diary_path):
                    fsutil.recover_file(diary_path)
                try:
                    diary_text = diary_path.read_text(encoding="utf-8")
                except FileNotFoundError:
                    diary_text = ""
                if not any(
                    r.id == data["id"] and r.action == "dream"
                    for r in parse_records(diary_rel, diary_text)
                ):
                    fsutil.append_entry(
                        diary_path,
                        entry,
                        create_with=DIARY_TITLE.format(date=Path(diary_rel).stem),
                        allow_hardlinks=self.links_ok,
                    )
                    done.append(
                        f"completed the dream of {data['id']}: its record was added to {diary_rel}"
                    )
                    report = DreamReport(status="dreamed", dream_id=data["id"])
                    self._commit(
                        report,
                        [p for p in data.get("written", []) if (self.root / p).exists()],
                        str(data.get("commit", "")),
                    )
            elif current == before:
                # Killed before MEMORY.md was replaced: take back the archive and the backup.
                if data.get("archive"):
                    archive_path, _ = self.layout.resolve_own(data["archive"]["path"])
                    with contextlib.suppress(OSError, VaultError):
                        if archive_path.exists():
                            self._truncate_archive(archive_path, data["archive"])
                if data.get("backup"):
                    backup_path, _ = self.layout.resolve_own(data["backup"])
                    backup_path.unlink(missing_ok=True)
                done.append(
                    f"rolled back the dream of {data['id']}, killed before it changed "
                    f"{self.memory_file}"
                )
            else:
                done.append(
                    f"the dream of {data['id']} was interrupted and {self.memory_file} "
                    f"changed since: left as it is (its backup: {data.get('backup')})"
                )
            journal_path.unlink(missing_ok=True)
        for line in done:
            log.warning("%s", line)
        return done

    def _record_refusal(self, now: dt.datetime, exc: DreamRefusedError, inputs: _Inputs) -> None:
        """A refused dream is recorded in the diary with every reason (MEMORY.md unchanged,
        nothing consumed: the next dream tries again)."""
        diary_rel = self.layout.diary_relpath(now.date())
        record = Record(
            "refused", now.isoformat(timespec="seconds"), inputs.memory_sha, inputs.memory_sha
        )
        facts = [
            ("When", now.isoformat(timespec="seconds")),
            ("Result", f"refused; {self.memory_file} unchanged, nothing consumed"),
        ]
        entry = render_entry(
            f"{now:%H:%M} · dream · refused",
            facts,
            [("Reasons", [one_line(visible(p), 300) for p in exc.problems])],
            "",
            record,
        )
        try:
            with self.writer_lock():
                fsutil.append_entry(
                    self._prepare(diary_rel),
                    entry,
                    create_with=DIARY_TITLE.format(date=now.date().isoformat()),
                    allow_hardlinks=self.links_ok,
                )
        except (OSError, VaultError) as error:
            log.warning("could not record the refusal in %s: %s", diary_rel, error)
            return
        report = DreamReport(status="refused", dream_id=record.id)
        self._commit(report, [diary_rel], f"vault dream {record.id}: refused\n\n{exc}")

    def _prepare(self, relpath: str) -> Path:
        """Resolve a file the dream writes (refusing a symlink out of the vault) and make its
        folder."""
        path, _ = self.layout.resolve_own(relpath)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def _backup_name(self, now: dt.datetime) -> str:
        stamp = now.strftime("%Y-%m-%dT%H%M%S")
        for n in range(1, 100):
            relpath = f"{self.backup_dir}/MEMORY.{stamp}{'' if n == 1 else f'-{n}'}.md"
            path = self._prepare(relpath)
            if path.exists():
                continue
            return relpath
        raise VaultError(
            f"too many backups named {self.backup_dir}/MEMORY.{stamp}*.md; "
            "wait a second and run the dream again."
        )

    @staticmethod
    def _archive_block(plan: DreamPlan, dream_id: str) -> str:
        block = [f"\n## Archived by the dream of {dream_id}\n\n"]
        for archived in plan.archived:
            block.append("\n".join(archived.entry.text.split("\n")) + "\n")
            block.append(f"  <!-- from ## {archived.entry.section}: {archived.reason} -->\n")
        return "".join(block)

    def _archive_state(self, plan: DreamPlan, dream_id: str) -> dict[str, Any]:
        """The archive before and after this dream's append, computed before it is made (the
        archive is written by dreams only, under the dream lock)."""
        path = self._prepare(self.archive_file)
        try:
            before: bytes | None = path.read_bytes()
        except FileNotFoundError:
            before = None
        block = self._archive_block(plan, dream_id).encode("utf-8")
        if before is None:
            after = ARCHIVE_TITLE.encode("utf-8") + block
        else:
            after = before + (b"\n" if before and not before.endswith(b"\n") else b"") + block
        return {
            "path": self.archive_file,
            "before_size": len(before) if before is not None else None,
            "before_sha256": fsutil.sha256_bytes(before) if before is not None else None,
            "after_sha256": fsutil.sha256_bytes(after),
        }

    def _archive(
        self, plan: DreamPlan, dream_id: str, undo: list[Callable[[], None]]
    ) -> dict[str, Any]:
        path = self._prepare(self.archive_file)
        state = self._archive_state(plan, dream_id)
        fsutil.append_entry(
            path,
            self._archive_block(plan, dream_id),
            create_with=ARCHIVE_TITLE,
            allow_hardlinks=self.links_ok,
        )
        undo.append(lambda: None if self._truncate_archive(path, state) else None)
        return state

    def _truncate_archive(self, path: Path, state: dict[str, Any]) -> bool:
        """Put the archive back as it was before a dream appended to it, if it has not
        changed since (checked by hash)."""
        data = path.read_bytes()
        if fsutil.sha256_bytes(data) != state["after_sha256"]:
            return False
        if state["before_size"] is None:
            with fsutil.locked(path):
                if fsutil.sha256_bytes(path.read_bytes()) == state["after_sha256"]:
                    path.unlink()
            return True
        prefix = data[: state["before_size"]]
        if fsutil.sha256_bytes(prefix) != state["before_sha256"]:
            return False
        fsutil.write_atomic(
            path, prefix.decode("utf-8"), state["after_sha256"], state["path"], self.links_ok
        )
        return True

    def _restore(self, path: Path, text: str, sha: str | None, current: str) -> None:
        if sha is None:
            with fsutil.locked(path):
                if fsutil.sha256_bytes(path.read_bytes()) == current:
                    path.unlink()
            return
        fsutil.write_atomic(path, text, current, self.memory_file, self.links_ok)

    def _commit(self, report: DreamReport, paths: list[str], message: str) -> None:
        if not self.config.dream.git_commit or not paths or not gitops.in_repository(self.root):
            return
        try:
            skipped = gitops.ignored(self.root, paths)
            if skipped:
                prefix = self.layout.prefix
                where = sorted(
                    {
                        prefix + p[len(prefix) :].split("/")[0] + "/"
                        if "/" in p[len(prefix) :]
                        else p
                        for p in skipped
                    }
                )
                note = (
                    f"{', '.join(where)} {'is' if len(where) == 1 else 'are'} ignored by "
                    "git (.gitignore): written but not committed. Remove the ignore rule "
                    "to keep the dream diary in git, or set [dream] git_commit = false."
                )
                report.warnings.append(note)
                log.warning("%s", note)
                paths = [p for p in paths if p not in skipped]
            if not paths:
                return
            report.commit = gitops.commit_only(self.root, paths, message)
        except VaultError as exc:
            report.warnings.append(str(exc))
            log.warning("%s", exc)

    # -- undo -----------------------------------------------------------------------------------

    def undo(self) -> DreamReport:
        """Restore MEMORY.md as it was before the last dream that changed it, byte for byte,
        take back what that dream put in the archive, and record the undo in the diary."""
        with fsutil.lock_file(self.lock_path, "dream", timeout=0.5):
            self.recover()
            return self._undo()

    def _undo(self) -> DreamReport:
        target = None
        for record in reversed(self._records()):
            if record.action == "undo":
                raise UndoError(
                    f"the last dream ({record.undoes}) was already undone "
                    f"({record.diary}); only the last dream can be undone. Older versions of "
                    f"MEMORY.md are in {self.backup_dir}/ (and in git history, if the vault is a "
                    "repository)."
                )
            if record.action == "dream" and record.changed_memory:
                target = record
                break
        if target is None:
            raise UndoError("no dream has changed MEMORY.md yet: there is nothing to undo.")
        now = self.now()
        memory_path, _ = self.layout.resolve_own(self.memory_file)
        try:
            current = fsutil.read_text(memory_path, self.memory_file, 50_000_000, self.links_ok)
            current_text, current_sha = current.text, current.sha256
        except NoteNotFoundError:
            current_text, current_sha = "", None
        if current_sha != target.memory_after:
            raise UndoError(
                f"MEMORY.md was edited after the dream of {target.id}; undoing it would throw "
                f"those edits away, so nothing was changed. The version from before that dream "
                f"is {target.backup}: copy what you need from it by hand."
            )
        restored_text = ""
        if target.memory_before is not None:
            try:
                real, _ = self.layout.resolve_own(target.backup or "")
                backup = fsutil.read_text(real, target.backup, 50_000_000, self.links_ok)
            except VaultError as exc:
                raise UndoError(
                    f"cannot undo the dream of {target.id}: its backup of MEMORY.md "
                    f"cannot be read ({exc}). Nothing was changed."
                ) from None
            if backup.sha256 != target.memory_before:
                raise UndoError(
                    f"cannot undo the dream of {target.id}: its backup "
                    f"{target.backup} was modified since. Nothing was changed."
                )
            restored_text = backup.text
        report = DreamReport(
            status="undone",
            dream_id=now.isoformat(timespec="seconds"),
            backup=target.backup,
            memory_chars=(len(current_text), len(restored_text)),
        )
        report.diff = unified_diff(current_text, restored_text, self.memory_file)
        diary_rel = self.layout.diary_relpath(now.date())
        written = [self.memory_file]
        with self.writer_lock():
            diary_path = self._prepare(diary_rel)
            if target.memory_before is None:
                self._restore(memory_path, "", None, current_sha or "")
            else:
                try:
                    fsutil.write_atomic(
                        memory_path, restored_text, current_sha, self.memory_file, self.links_ok
                    )
                except NoteChangedError:
                    raise NoteChangedError(self.memory_file, "the undo") from None
            archive_note = "untouched (that dream archived nothing)"
            if target.archive:
                archive_path, _ = self.layout.resolve_own(target.archive["path"])
                try:
                    undone = self._truncate_archive(archive_path, target.archive)
                except (OSError, VaultError):
                    undone = False
                if undone:
                    archive_note = "the entries that dream archived were taken back out"
                    written.append(target.archive["path"])
                else:
                    archive_note = (
                        f"{target.archive['path']} changed since that dream, so the "
                        "entries it archived are still there"
                    )
                    report.warnings.append(archive_note)
            record = Record(
                "undo", report.dream_id or "", current_sha, target.memory_before, undoes=target.id
            )
            facts = [
                ("When", now.isoformat(timespec="seconds")),
                ("Undid", f"the dream of {target.id} (recorded in `{target.diary}`)"),
                ("MEMORY.md", f"restored from `{target.backup}`, sha256 `{target.memory_before}`"),
                ("Archive", archive_note),
                (
                    "Still consumed",
                    "the entries that dream read stay consumed, so the next dream does not redo it",
                ),
            ]
            entry = render_entry(f"{now:%H:%M} · undo", facts, [], report.diff, record)
            fsutil.append_entry(
                diary_path,
                entry,
                create_with=DIARY_TITLE.format(date=now.date().isoformat()),
                allow_hardlinks=self.links_ok,
            )
            written.append(diary_rel)
        report.written = written
        report.diary = diary_rel
        report.message = (
            f"restored MEMORY.md from before the dream of {target.id} "
            f"({target.backup}); recorded in {diary_rel}."
        )
        self._commit(
            report,
            written,
            f"vault dream --undo: restore MEMORY.md from before the dream of {target.id}",
        )
        return report


# -- reporting --------------------------------------------------------------------------------


def _chronological(records: list[Record]) -> list[Record]:
    """Records ordered by the instant of their id (an ISO date-time with its offset; a naive
    one is local time); a record whose id is no date-time keeps its place after the one
    before it. Ties keep file order."""
    keyed = []
    last = dt.datetime.min.replace(tzinfo=dt.UTC)
    for position, record in enumerate(records):
        try:
            when = dt.datetime.fromisoformat(record.id)
            last = when if when.tzinfo else when.astimezone()
        except ValueError:
            pass
        keyed.append((last, position, record))
    return [record for _, _, record in sorted(keyed, key=lambda item: item[:2])]


def _scope_hits(hits: dict[tuple[str, str], int], memory_file: str) -> dict[tuple[str, str], int]:
    """The search hit counts as the decisions read them (`decide.hit_count` looks MEMORY.md's
    entries up as "MEMORY.md"): a scope's dream counts the hits of its own MEMORY.md there,
    not those of the root's."""
    if memory_file == MEMORY_FILE:
        return hits
    out = {key: n for key, n in hits.items() if key[0] != MEMORY_FILE}
    out.update({(MEMORY_FILE, h): n for (path, h), n in hits.items() if path == memory_file})
    return out


def _describe(
    report: DreamReport, plan: DreamPlan, before: str, after: str, memory_file: str = MEMORY_FILE
) -> None:
    report.added = [a.to_dict() for a in plan.added]
    report.merged = [m.to_dict() for m in plan.merged]
    report.archived = [a.to_dict() for a in plan.archived]
    report.edited = [e.to_dict() for e in plan.edited]
    report.skipped = [s.to_dict() for s in plan.skipped]
    report.superseded = [s.to_dict() for s in plan.superseded]
    report.refused_items = [r.to_dict() for r in plan.refused]
    report.diff = unified_diff(before, after, memory_file)
    report.memory_chars = (len(before), len(after))


def _summary(report: DreamReport, plan: DreamPlan) -> str:
    parts = [
        f"{len(plan.added)} added",
        f"{len(plan.merged)} merged",
        f"{len(plan.archived)} archived",
    ]
    if plan.edited:
        parts.append(f"{len(plan.edited)} reworded")
    if plan.superseded:
        parts.append(f"{len(plan.superseded)} superseded")
    parts.append(f"{len(plan.skipped)} not promoted")
    if plan.refused:
        parts.append(f"{len(plan.refused)} refused")
    head = (
        f"{report.new_entries} new entries from the daily logs "
        f"{report.window[0]} to {report.window[1]}"
        if report.window
        else ""
    )
    tail = (
        "MEMORY.md unchanged"
        if not plan.changes_memory
        else f"MEMORY.md {report.memory_chars[0]:,} -> {report.memory_chars[1]:,} characters"
    )
    return f"{head}: " + ", ".join(parts) + f"; {tail}"


def _diary_entry(
    report: DreamReport,
    plan: DreamPlan,
    record: Record,
    now: dt.datetime,
    archive_file: str = ARCHIVE_FILE,
) -> str:
    mode = report.mode + (f" ({report.model})" if report.model else "")
    facts = [
        ("When", now.isoformat(timespec="seconds")),
        ("Mode", f"{mode}; similarity: {report.similarity}"),
        ("Window", f"{report.window[0]} to {report.window[1]}" if report.window else "-"),
        ("Result", _summary(report, plan)),
    ]
    if record.backup:
        facts.append(("Backup", f"`{record.backup}` (what `vault dream --undo` restores)"))
    inputs = [
        f"`{i['path']}` sha256 `{i['sha256']}`"
        + (f" ({i['new_entries']} new entries)" if "new_entries" in i else "")
        for i in report.inputs
    ]
    added = [
        f"to **{a.section}**: {one_line(a.text)} ← `{', '.join(a.sources)}` — {a.reason}"
        for a in plan.added
    ]
    edited = [
        f"in **{e.entry.section}**: {one_line(e.entry.text, 80)} → {one_line(e.text)} — {e.reason}"
        for e in plan.edited
    ]
    merged = [
        f"`{m.source}` {one_line(m.text, 80)} → into the "
        f"{'MEMORY.md' if m.into.startswith('MEMORY.md') else f'new `{m.into}`'} "
        f'entry "{one_line(plain_text(m.into_text), 60)}" — {m.reason}'
        for m in plan.merged
    ]
    archived = [
        f"from **{a.entry.section}**: {one_line(a.entry.text)} → `{archive_file}` — {a.reason}"
        for a in plan.archived
    ]
    skipped = [f"`{s.source}` {_quoted(s.text)} — {s.reason}" for s in plan.skipped]
    superseded = [
        f"in **{s.entry.section}**: {one_line(s.entry.text)} → superseded by "
        f'`{s.by}` "{_quoted(s.by_text)}" — {s.reason}; moved to ## History'
        for s in plan.superseded
    ]
    refused = [
        f"{r.what}: {_quoted(r.text)}"
        + (f" ← `{', '.join(r.sources)}`" if r.sources else "")
        + f" — {r.reason}"
        for r in plan.refused
    ]
    sections = [
        ("Inputs", inputs),
        ("Added", added),
        ("Reworded", edited),
        ("Superseded", superseded),
        ("Merged", merged),
        ("Archived", archived),
        ("Refused", refused),
        ("Not promoted", skipped),
    ]
    return render_entry(
        f"{now:%H:%M} · dream · {report.mode}", facts, sections, report.diff, record
    )


def _quoted(text: str) -> str:
    """A refused line as the diary quotes it: one that reads as an instruction to a model is
    defanged (files/injection.py), so the diary read back to an agent does not pass it on."""
    if is_instruction(text):
        return f"(defanged) {defang(text)}"
    return one_line(text, 80)


def _commit_message(report: DreamReport, diary: str | None = None) -> str:
    return (
        f"vault dream {report.dream_id}: {len(report.added)} added, "
        f"{len(report.merged)} merged, {len(report.archived)} archived\n\n"
        f"{report.message}\nDiary: {diary or report.diary or ''}"
    )


def recover_dream(config: Config) -> list[Any]:
    """`Dreamer.recover` for the scope of `config` (what `vault doctor` runs), as findings."""
    from ..index import Finding

    dreamer = Dreamer(
        config, lambda: fsutil.lock_file(config.cache_dir / "write.lock", "index writer")
    )
    with fsutil.lock_file(dreamer.lock_path, "dream", timeout=5.0):
        done = dreamer.recover()
    return [Finding(dreamer.memory_file, "a dream was interrupted", line) for line in done]


__all__ = [
    "DreamDisabledError",
    "DreamRefusedError",
    "DreamReport",
    "Dreamer",
    "UndoError",
    "recover_dream",
]
