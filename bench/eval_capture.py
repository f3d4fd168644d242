"""What capture keeps: `vault flush` and `vault dream` judged by the answers they preserve.

    python bench/eval_capture.py --data ../shared/eval/locomo/locomo-dev.json --conversations 0-4 \
        [--llm-url URL --llm-model M] [--json-out FILE]

Data in the LoCoMo format (a JSON list of samples: `conversation` with `speaker_a`,
`speaker_b`, `session_N` turns and `session_N_date_time`; `observation`, `event_summary`,
`qa`). For each conversation three vaults are built:

1. raw: every turn verbatim, one line per turn, as the benchmark's `make_vault.py` builds it
   (the ceiling);
2. flushed: each session replayed through the real `Vault.flush` as the conversation it was
   (OpenAI-style messages, role `user` with each speaker's `name`: two people talking), under a
   fixed session id, on its own date, with the clock pinned (`VAULT_NOW`) to the session's
   start; nothing else is written;
3. dreamed: a copy of the flushed vault after one `Vault.dream` over all its days (clock pinned
   to the morning after the last session).

Then, on each vault, the same search (`Vault.search`, 50 hits, recency measured from the day
after the last session) and the same 2,000-character context per question (the benchmark's
own walk, `score.budget_recall`: hits in rank order, each costing the characters of the lines
it adds, stopping at the first that does not fit) give:

- `answer_in_context`: the share of questions (categories 1-4) whose gold answer is contained
  in the context (`answer_tokens(answer) <= context_tokens(context)`, see `normalise`); the
  context is what an agent reads: each hit's `path:start-end (heading)` line and the lines
  the walk took. Questions whose answer has no content word are left out (the same for all
  three vaults).
- `observation_recall` (flushed vault): the share of gold observations whose evidence turn's
  content is carried by an entry flushed from that turn's session (see `carries`).
- `chars`: characters of the daily logs (and MEMORY.md, for the dreamed vault) relative to the
  raw vault's logs.
- `memory_md`: the share of event-summary items that MEMORY.md alone states (`states`), its
  size, and its hygiene: entries that keep a speaker prefix, duplicate entries, entries
  without provenance.

The benchmark's `make_vault.py` and `score.py` are imported from the data's folder (or
`--eval-dir`); the data is never copied anywhere but the temporary vaults.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib.util
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from _harness import ROOT  # noqa: E402 - this checkout's vault_memory first
from eval_search import eval_dir  # noqa: E402 - where the scorer sits, found as the search eval finds it

DEFAULT_EVAL = eval_dir(None)
BUDGET = 2000
FETCH_K = 50
CATEGORIES = (1, 2, 3, 4)
#: Share of a target's content words an entry must hold to carry it (observations, events).
CARRY_SHARE = 0.5


# -- the benchmark's own tools -----------------------------------------------------------------


def eval_tools(
    data: Path | None = None, eval_dir: Path | None = None
) -> tuple[ModuleType, ModuleType]:
    """(make_vault, score) from `eval_dir`, else the data's folder, else ../shared/eval/locomo."""
    places = [p for p in (eval_dir, data.parent if data else None, DEFAULT_EVAL) if p]
    for place in places:
        if (place / "score.py").is_file() and (place / "make_vault.py").is_file():
            return _load(place / "make_vault.py"), _load(place / "score.py")
    raise SystemExit(
        f"make_vault.py and score.py not found in {', '.join(map(str, places))}; give --eval-dir"
    )


def _load(path: Path) -> ModuleType:
    name = f"_capture_eval_{path.stem}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# -- normalised tokens -------------------------------------------------------------------------

_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
_MONTH_NUMBER = (
    {m: i + 1 for i, m in enumerate(_MONTHS)}
    | {m[:3]: i + 1 for i, m in enumerate(_MONTHS)}
    | {"sept": 9}
)
_NUMBERS = {
    w: str(i)
    for i, w in enumerate(
        re.findall(
            r"\S+",
            (
                "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "  # noqa: E501
                "fifteen sixteen seventeen eighteen nineteen twenty"
            ),
        )
    )
}
_NUMBERS |= {
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "hundred": "100",
    "once": "1",
    "twice": "2",
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTH_NUMBER, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_DATES = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\b(?P<year>\d{4})-(?P<mm>\d{2})-(?P<day>\d{2})\b",
        rf"\b{_DAY}(?: of)? {_MONTH},? {_YEAR}\b",
        rf"\b{_MONTH} {_DAY},? {_YEAR}\b",
        rf"\b{_MONTH},? {_YEAR}\b",
        r"\b(?P<year>\d{4})-(?P<mm>\d{2})\b(?!-)",
        rf"\b{_DAY}(?: of)? {_MONTH}\b",
        rf"\b{_MONTH} {_DAY}\b(?!,? \d)",
    )
]
_WORD = re.compile(r"[a-z0-9_]+")
# the benchmark's scorer stop list, plus words that only frame an answer
_FRAME = frozenset(["yes", "likely", "probably", "maybe", "somewhat"])


def _date_tokens(match: re.Match[str]) -> str:
    """A date as the tokens it answers: `7 May 2023` and `2023-05-07` both give
    `2023_05_07 2023_05 05_07 2023`; `May 2023` gives `2023_05 2023`; `7 May`, `05_07`."""
    parts = match.groupdict()
    month = int(parts["mm"]) if parts.get("mm") else _MONTH_NUMBER[parts["month"].lower()]
    if not 1 <= month <= 12:
        return match[0]
    year, day = parts.get("year"), parts.get("day")
    if day and not 1 <= int(day) <= 31:
        return match[0]
    tokens = []
    if year and day:
        tokens.append(f"{year}_{month:02d}_{int(day):02d}")
    if year:
        tokens.append(f"{year}_{month:02d}")
    if day:
        tokens.append(f"{month:02d}_{int(day):02d}")
    if year:
        tokens.append(year)
    return " " + " ".join(tokens) + " "


def normalise(text: str, stopwords: frozenset[str]) -> list[str]:
    """Content tokens of `text`: lower case; dates as date tokens (`_date_tokens`: `7 May
    2023`, `May 7th, 2023` and `2023-05-07` are the same date); number words as digits (`two`
    -> `2`, `twice` -> `2`); a light plural fold; neither the scorer's stop words nor answer
    framing ("likely", "yes")."""
    for pattern in _DATES:
        text = pattern.sub(_date_tokens, text)
    text = text.lower().replace("'s ", " ").replace("’s ", " ")
    out = []
    for word in _WORD.findall(text):
        word = re.sub(r"^(\d+)(?:st|nd|rd|th)$", r"\1", word)
        word = _NUMBERS.get(word, word)
        if word in stopwords or word in _FRAME:
            continue
        if not word[0].isdigit() and len(word) > 3:
            if word.endswith("ies") and len(word) > 4:
                word = word[:-3] + "y"
            elif word.endswith(("ches", "shes", "sses", "xes")):
                word = word[:-2]
            elif word.endswith("s") and not word.endswith("ss"):
                word = word[:-1]
        out.append(word)
    return out


def answer_in(answer: str, context: str, stopwords: frozenset[str]) -> bool | None:
    """Whether every content token of `answer` occurs in `context`; None when the answer has
    none (left out of the share)."""
    wanted = set(normalise(answer, stopwords))
    if not wanted:
        return None
    return wanted <= set(normalise(context, stopwords))


def coverage(target: set[str], text: str, stopwords: frozenset[str]) -> float:
    if not target:
        return 0.0
    return len(target & set(normalise(text, stopwords))) / len(target)


def carries(
    turn: str,
    observation: str,
    entries: list[str],
    names: set[str],
    stopwords: frozenset[str],
    speaker: str | None = None,
) -> bool:
    """Whether one of `entries` carries what `observation` took from its evidence `turn`.

    The observation's key is the content words it shares with the turn (what the annotator
    took from it), speakers' names left out; when it shares none (a pure paraphrase) the key is
    the turn's own content words. An entry carries it when it comes from the turn (it is the
    turn's `speaker`'s: under their label, or naming them when it has no label; and at least
    half of its own content words are the turn's) and holds at least half of the key
    (`CARRY_SHARE`), alone: several entries that each hold a scrap do not, nor does an entry
    of another turn that happens to use the same words."""
    turn_words = set(normalise(turn, stopwords)) - names
    key = (set(normalise(observation, stopwords)) - names) & turn_words or turn_words
    for entry in entries:
        if speaker and not said_by(entry, speaker):
            continue
        words = set(normalise(entry, stopwords)) - names
        if not words or len(words & turn_words) / len(words) < CARRY_SHARE:
            continue
        if coverage(key, entry, stopwords) >= CARRY_SHARE:
            return True
    return False


_ENTRY_LABEL = re.compile(r"^[^:\n]{1,40}:\s")


def said_by(entry: str, speaker: str) -> bool:
    """An entry is `speaker`'s: it opens with their label (offline flush), or has no label and
    names them (a model's "Maria adopted a puppy")."""
    if _ENTRY_LABEL.match(entry):
        return entry.lower().startswith(speaker.lower() + ":")
    return re.search(rf"\b{re.escape(speaker)}\b", entry, re.IGNORECASE) is not None


def states(item: str, entries: list[str], stopwords: frozenset[str]) -> bool:
    """Whether one MEMORY.md entry states the event-summary `item`: it holds at least half of
    the item's content words (names included: "Ines" matters in "Ines adopts a dog")."""
    target = set(normalise(item, stopwords))
    return any(coverage(target, entry, stopwords) >= CARRY_SHARE for entry in entries)


# -- the conversations ---------------------------------------------------------------------------


def load_samples(
    data: Path, selection: str, make_vault: ModuleType, eval_dir: Path | None = None
) -> list[tuple[int, dict[str, Any]]]:
    """(number, LoCoMo-shaped sample) of each chosen conversation. `data` is the LoCoMo JSON
    file, or a folder of REALTALK chats (`Chat_<n>_<A>_<B>.json`), which the benchmark's own
    `make_vault_realtalk.py` adapts to the LoCoMo shape in memory (no observations: the
    observation recall is LoCoMo's alone)."""
    if not data.is_dir():
        loaded = json.loads(data.read_text(encoding="utf-8"))
        return [(i, loaded[i]) for i in make_vault.parse_selection(selection, len(loaded))]
    places = [eval_dir, eval_dir.parent / "realtalk"] if eval_dir else []
    places.append(DEFAULT_EVAL.parent / "realtalk")
    found = [
        p / "make_vault_realtalk.py" for p in places if (p / "make_vault_realtalk.py").is_file()
    ]
    if not found:
        raise SystemExit(f"make_vault_realtalk.py not found in {', '.join(map(str, places))}")
    realtalk = _load(found[0])
    chats = realtalk.find_chats(data)
    out = []
    for number in realtalk.select(selection, chats):
        chat = json.loads(chats[number].read_text(encoding="utf-8"))
        sample, _ = realtalk.to_locomo_sample(chat, chats[number].stem)
        out.append((number, sample))
    return out


# -- one conversation --------------------------------------------------------------------------


@dataclass
class Session:
    number: int
    when: dt.datetime
    turns: list[dict[str, Any]]


def sessions_of(sample: dict[str, Any], make_vault: ModuleType) -> list[Session]:
    conv = sample["conversation"]
    return [
        Session(
            n,
            make_vault.parse_date_time(conv[f"session_{n}_date_time"]),
            list(conv[f"session_{n}"]),
        )
        for n in make_vault.session_numbers(conv)
    ]


def turn_text(turn: dict[str, Any]) -> str:
    """A turn's text with its shared photo described, exactly as the raw vault shows it."""
    text = " ".join(str(turn.get("text", "")).split())
    caption = turn.get("blip_caption")
    if caption:
        photo = f"(shared a photo: {' '.join(str(caption).split())})"
        text = f"{text} {photo}" if text else photo
    return text


def messages_of(session: Session) -> list[dict[str, str]]:
    """The session as chat messages: two people, so both speak as `user`, each with a name."""
    return [
        {"role": "user", "name": str(t.get("speaker", "?")), "content": turn_text(t)}
        for t in session.turns
        if turn_text(t)
    ]


def session_id(session: Session) -> str:
    return f"session-{session.number}"


@contextlib.contextmanager
def pinned_clock(when: dt.datetime) -> Iterator[None]:
    old = os.environ.get("VAULT_NOW")
    os.environ["VAULT_NOW"] = when.isoformat(timespec="minutes")
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("VAULT_NOW", None)
        else:
            os.environ["VAULT_NOW"] = old


# -- the three vaults --------------------------------------------------------------------------


def llm_settings(url: str | None, model: str | None) -> str:
    if not url:
        return ""
    return f'\n[llm]\nbase_url = "{url}"\nmodel = "{model or ""}"\ntimeout_seconds = 300\n'


def build_raw(index: int, sample: dict[str, Any], out: Path, make_vault: ModuleType) -> Path:
    """make_vault.py's vault (and its questions.jsonl) under out/raw/conv-N."""
    make_vault.build_conversation(index, sample, out / "raw", True)
    return out / "raw" / f"conv-{index}" / "vault"


def build_flushed(sessions: list[Session], root: Path, llm: str = "") -> dict[str, Any]:
    """Each session through `Vault.flush`, on its date, with the clock pinned to its start."""
    from vault_memory import Vault

    Vault.init(root)
    if llm:
        with (root / "vault.toml").open("a", encoding="utf-8") as fh:
            fh.write(llm)
    vault = Vault(root)
    entries = warnings = 0
    modes: dict[str, int] = {}
    started = time.perf_counter()
    for session in sessions:
        with pinned_clock(session.when):
            report = vault.flush(
                messages_of(session), session=session_id(session), date=session.when.date()
            )
        entries += len(report.entries)
        warnings += len(report.warnings)
        modes[report.mode] = modes.get(report.mode, 0) + 1
    return {
        "entries": entries,
        "warnings": warnings,
        "modes": modes,
        "seconds": time.perf_counter() - started,
    }


def build_dreamed(flushed: Path, root: Path, sessions: list[Session]) -> dict[str, Any]:
    """A copy of the flushed vault after one `vault dream --days N` over all its days; a
    refused dream (a model's unusable plan) leaves it as flushed, and says so."""
    from vault_memory import Vault, VaultError

    shutil.copytree(flushed, root, ignore=shutil.ignore_patterns(".vault"))
    first, last = sessions[0].when, sessions[-1].when
    morning = dt.datetime.combine(last.date() + dt.timedelta(days=1), dt.time(3, 30))
    days = (morning.date() - first.date()).days + 1
    started = time.perf_counter()
    with pinned_clock(morning):
        try:
            report = Vault(root).dream(lookback_days=days)
        except VaultError as exc:  # a model's plan refused: the vault stays as flushed
            return {
                "status": "refused",
                "mode": "llm",
                "added": 0,
                "merged": 0,
                "edited": 0,
                "archived": 0,
                "skipped": 0,
                "warnings": [str(exc)],
                "seconds": time.perf_counter() - started,
            }
    return {
        "status": report.status,
        "mode": report.mode,
        "added": len(report.added),
        "merged": len(report.merged),
        "edited": len(report.edited),
        "archived": len(report.archived),
        "skipped": len(report.skipped),
        "warnings": report.warnings,
        "seconds": time.perf_counter() - started,
    }


# -- measures ----------------------------------------------------------------------------------


def log_chars(vault: Path, with_memory: bool = False) -> int:
    total = sum(len(p.read_text(encoding="utf-8")) for p in sorted((vault / "memory").glob("*.md")))
    memory = vault / "MEMORY.md"
    if with_memory and memory.exists():
        total += len(memory.read_text(encoding="utf-8"))
    return total


def contexts(
    vault: Path, questions: list[dict[str, Any]], score: ModuleType, today: dt.date
) -> list[str]:
    """The 2,000-character context each question gets from `vault`."""
    from vault_memory import Vault

    v = Vault(vault)
    v.index()
    costs = score.LineCosts(vault)
    out = []
    for question in questions:
        hits = [
            h.to_dict()
            for h in v.search(question["question"], limit=FETCH_K, fresh=False, today=today)
        ]
        out.append(context_of(hits, vault, score, costs))
    return out


def context_of(hits: list[dict[str, Any]], vault: Path, score: ModuleType, costs: Any) -> str:
    """The hits the benchmark's budget walk takes, as an agent reads them: `path:start-end
    (heading)` and their lines. `score.budget_recall` decides how many hits fit (asked with
    every line of the hits as evidence, it reports the hits it took); a first hit over the
    budget is cut to the lines that fit, at least its first, as the walk does."""
    spans = score.spans_of(hits, vault)
    probe = {
        "evidence": [{"path": s[0], "line": n} for s in spans if s for n in range(s[1], s[2] + 1)]
        or [{"path": "", "line": 0}]
    }
    n_taken = score.budget_recall(probe, spans, [BUDGET], costs)[f"results@{BUDGET}ch"]
    parts: list[str] = []
    seen: set[tuple[str, int]] = set()
    taken = 0
    for hit, span in zip(hits, spans, strict=True):
        if span is None:
            continue
        if taken >= n_taken:
            break
        taken += 1
        path, start, end = span
        line_costs = costs(path)
        lines = [
            n for n in range(max(1, start), min(end, len(line_costs)) + 1) if (path, n) not in seen
        ]
        if taken == 1 and sum(line_costs[n - 1] for n in lines) > BUDGET:
            kept, spent = lines[:1], line_costs[lines[0] - 1] if lines else 0
            for n in lines[1:]:
                if spent + line_costs[n - 1] > BUDGET:
                    break
                kept.append(n)
                spent += line_costs[n - 1]
            lines = kept
        if not lines:
            continue
        seen.update((path, n) for n in lines)
        text = (vault / path).read_text(encoding="utf-8").split("\n")
        body = "\n".join(text[n - 1] for n in lines)
        parts.append(f"{path}:{lines[0]}-{lines[-1]} ({hit.get('heading', '')})\n{body}")
    return "\n".join(parts)


def observations_of(sample: dict[str, Any], make_vault: ModuleType) -> list[tuple[str, list[str]]]:
    """(observation, evidence dia_ids) of every session."""
    out = []
    for per_session in sample.get("observation", {}).values():
        for facts in per_session.values():
            for fact in facts:
                if isinstance(fact, list) and len(fact) == 2 and isinstance(fact[0], str):
                    raw = fact[1] if isinstance(fact[1], list) else [fact[1]]
                    out.append((fact[0], make_vault.normalise_evidence(raw)))
    return out


def events_of(sample: dict[str, Any]) -> list[str]:
    return [
        item
        for per_session in sample.get("event_summary", {}).values()
        for key, items in per_session.items()
        if key != "date" and isinstance(items, list)
        for item in items
        if isinstance(item, str)
    ]


def observation_recall(
    sample: dict[str, Any], vault: Path, make_vault: ModuleType, stopwords: frozenset[str]
) -> tuple[int, int]:
    """(observations carried by an entry of their evidence turn's session, observations)."""
    from vault_memory import Vault

    conv = sample["conversation"]
    names = {
        w
        for s in (conv.get("speaker_a", ""), conv.get("speaker_b", ""))
        for w in normalise(s, stopwords)
    }
    turns: dict[str, tuple[int, str, str]] = {}
    for number in make_vault.session_numbers(conv):
        for turn in conv[f"session_{number}"]:
            if turn.get("dia_id"):
                turns[turn["dia_id"]] = (number, turn_text(turn), str(turn.get("speaker", "")))
    entries: dict[int, list[str]] = {}
    for info in Vault(vault).sessions():
        number = int(info.id.rsplit("-", 1)[1])
        entries[number] = [text for block in info.blocks for _, text in block.entries]
    kept = total = 0
    for observation, evidence in observations_of(sample, make_vault):
        found = [turns[e] for e in evidence if e in turns]
        if not found:
            continue
        total += 1
        kept += any(
            carries(text, observation, entries.get(number, []), names, stopwords, speaker)
            for number, text, speaker in found
        )
    return kept, total


_PREFIX = re.compile(r"^(?:\*\*|__)?(?P<label>[A-Za-z][\w .'-]{0,40}?)(?:\*\*|__)?:\s")
ROLE_LABELS = {"user", "assistant", "system", "tool", "human", "ai"}


def memory_checks(vault: Path, sample: dict[str, Any], stopwords: frozenset[str]) -> dict[str, Any]:
    """MEMORY.md alone: what it states of the event summaries, its size, its hygiene."""
    from vault_memory.files import parse_memory, plain_text

    text = (vault / "MEMORY.md").read_text(encoding="utf-8")
    entries = parse_memory(text).entries
    bodies = [plain_text(e.text) for e in entries]
    conv = sample["conversation"]
    speakers = {str(conv.get(k, "")).lower() for k in ("speaker_a", "speaker_b")} | ROLE_LABELS
    prefixed = [b for b in bodies if (m := _PREFIX.match(b)) and m["label"].lower() in speakers]
    seen: set[str] = set()
    duplicates = 0
    for body in bodies:
        key = " ".join(body.casefold().split()).rstrip(".!")
        duplicates += key in seen
        seen.add(key)
    events = events_of(sample)
    stated = sum(states(item, bodies, stopwords) for item in events)
    return {
        "chars": len(text),
        "entries": len(entries),
        "events": len(events),
        "events_stated": stated,
        "speaker_prefixes": len(prefixed),
        "duplicates": duplicates,
        "without_provenance": sum(1 for e in entries if not e.sources),
    }


# -- one conversation, then all ----------------------------------------------------------------


@dataclass
class Result:
    label: str
    questions: int = 0
    answered: dict[str, int] = field(default_factory=dict)  # vault -> answers in context
    observations: int = 0
    observations_kept: int = 0
    chars: dict[str, int] = field(default_factory=dict)
    memory: dict[str, Any] = field(default_factory=dict)
    flush: dict[str, Any] = field(default_factory=dict)
    dream: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    misses: list[dict[str, Any]] = field(default_factory=list)  # answers the flush lost

    def share(self, vault: str) -> float:
        return self.answered.get(vault, 0) / self.questions if self.questions else 0.0


def run_conversation(
    index: int,
    sample: dict[str, Any],
    work: Path,
    make_vault: ModuleType,
    score: ModuleType,
    llm: str = "",
    reuse: Path | None = None,
) -> Result:
    started = time.perf_counter()
    stopwords = frozenset(score.STOPWORDS)
    sessions = sessions_of(sample, make_vault)
    label = f"conv-{index}"
    flushed, dreamed = work / "flushed" / label, work / "dreamed" / label
    result = Result(label)
    if reuse is not None and (reuse / "flushed" / label).is_dir():
        # The raw and flushed vaults of an earlier run (same data, same flush), their caches
        # included: only the dream and the dreamed vault are new.
        shutil.copytree(reuse / "raw" / label, work / "raw" / label)
        shutil.copytree(reuse / "flushed" / label, flushed)
        raw = work / "raw" / label / "vault"
        result.flush = {"entries": 0, "warnings": 0, "modes": {"reused": 1}, "seconds": 0.0}
    else:
        raw = build_raw(index, sample, work, make_vault)
        result.flush = build_flushed(sessions, flushed, llm)
    result.dream = build_dreamed(flushed, dreamed, sessions)

    qfile = work / "raw" / label / "questions.jsonl"
    questions = [
        q
        for q in score.load_questions(qfile)
        if int(q["category"]) in CATEGORIES and set(normalise(str(q["answer"]), stopwords))
    ]
    result.questions = len(questions)
    today = sessions[-1].when.date() + dt.timedelta(days=1)
    found: dict[str, list[bool]] = {}
    for name, vault in (("raw", raw), ("flushed", flushed), ("dreamed", dreamed)):
        texts = contexts(vault, questions, score, today)
        found[name] = [
            bool(answer_in(str(q["answer"]), c, stopwords))
            for q, c in zip(questions, texts, strict=True)
        ]
        result.answered[name] = sum(found[name])
    result.misses = [
        {"question": q["question"], "answer": str(q["answer"]), "category": q["category"]}
        for q, r, f in zip(questions, found["raw"], found["flushed"], strict=True)
        if r and not f
    ]
    result.observations_kept, result.observations = observation_recall(
        sample, flushed, make_vault, stopwords
    )
    result.chars = {
        "raw": log_chars(raw),
        "flushed": log_chars(flushed),
        "dreamed": log_chars(dreamed, with_memory=True),
    }
    result.memory = memory_checks(dreamed, sample, stopwords)
    result.seconds = time.perf_counter() - started
    return result


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def totals(results: list[Result]) -> dict[str, Any]:
    q = sum(r.questions for r in results)
    answered = {
        v: sum(r.answered.get(v, 0) for r in results) for v in ("raw", "flushed", "dreamed")
    }
    chars = {v: sum(r.chars.get(v, 0) for r in results) for v in ("raw", "flushed", "dreamed")}
    memory = {
        k: sum(r.memory.get(k, 0) for r in results)
        for k in (
            "chars",
            "entries",
            "events",
            "events_stated",
            "speaker_prefixes",
            "duplicates",
            "without_provenance",
        )
    }
    return {
        "questions": q,
        "answer_in_context_raw": _ratio(answered["raw"], q),
        "answer_in_context_flushed": _ratio(answered["flushed"], q),
        "answer_in_context_dreamed": _ratio(answered["dreamed"], q),
        "flushed_vs_raw": _ratio(answered["flushed"], answered["raw"]),
        "observation_recall": _ratio(
            sum(r.observations_kept for r in results), sum(r.observations for r in results)
        ),
        "chars_ratio": _ratio(chars["flushed"], chars["raw"]),
        "chars_ratio_dreamed": _ratio(chars["dreamed"], chars["raw"]),
        "memory_md_events": _ratio(memory["events_stated"], memory["events"]),
        "memory_md": memory,
    }


def table(results: list[Result]) -> str:
    head = (
        f"{'':<8} {'n':>4} {'raw':>6} {'flushed':>8} {'dreamed':>8} {'fl/raw':>7} "
        f"{'obs':>6} {'chars':>6} {'+MEM':>6} {'MEM ev':>7} {'MEM ch':>7} {'pfx':>4} "
        f"{'dup':>4} {'nosrc':>5}"
    )
    rows = [head]

    def row(
        name: str,
        q: int,
        a: dict[str, float],
        obs: float,
        ch: float,
        chd: float,
        mem: dict[str, Any],
    ) -> str:
        return (
            f"{name:<8} {q:>4} {a['raw']:>6.3f} {a['flushed']:>8.3f} {a['dreamed']:>8.3f} "
            f"{_ratio(a['flushed'], a['raw']):>7.3f} {obs:>6.3f} {ch:>6.3f} {chd:>6.3f} "
            f"{_ratio(mem['events_stated'], mem['events']):>7.3f} {mem['chars']:>7,} "
            f"{mem['speaker_prefixes']:>4} {mem['duplicates']:>4} "
            f"{mem['without_provenance']:>5}"
        )

    for r in results:
        rows.append(
            row(
                r.label,
                r.questions,
                {v: r.share(v) for v in ("raw", "flushed", "dreamed")},
                _ratio(r.observations_kept, r.observations),
                _ratio(r.chars["flushed"], r.chars["raw"]),
                _ratio(r.chars["dreamed"], r.chars["raw"]),
                r.memory,
            )
        )
    t = totals(results)
    rows.append(
        row(
            "overall",
            t["questions"],
            {
                "raw": t["answer_in_context_raw"],
                "flushed": t["answer_in_context_flushed"],
                "dreamed": t["answer_in_context_dreamed"],
            },
            t["observation_recall"],
            t["chars_ratio"],
            t["chars_ratio_dreamed"],
            t["memory_md"],
        )
    )
    return "\n".join(rows)


LEGEND = """\
raw/flushed/dreamed: answer_in_context (share of questions whose gold answer's content words
  are all in the 2,000-character context); fl/raw: flushed / raw; obs: observation_recall
  (flushed); chars: flushed logs / raw logs; +MEM: dreamed logs + MEMORY.md / raw logs;
  MEM ev: share of event-summary items MEMORY.md alone states; MEM ch: MEMORY.md characters;
  pfx / dup / nosrc: MEMORY.md entries with a speaker prefix, duplicated, without provenance"""


RESULTS = ROOT / "bench" / "results" / "capture.json"


def record_results(split: str, figures: dict[str, Any], mode: str) -> None:
    """The overall figures of one split in bench/results/capture.json (other splits kept)."""
    import importlib.metadata
    import platform

    try:
        data = json.loads(RESULTS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {"name": "capture", "figures": {}}
    data["date"] = dt.date.today().isoformat()
    data["machine"] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
    }
    data["versions"] = {"vault-memory": importlib.metadata.version("vault-memory")}
    figures = {k: v for k, v in figures.items() if k != "memory_md"} | {"mode": mode}
    figures["dreamed_vs_flushed"] = _ratio(
        figures["answer_in_context_dreamed"], figures["answer_in_context_flushed"]
    )
    data["figures"][split] = figures
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_EVAL / "locomo-dev.json")
    parser.add_argument(
        "--conversations",
        default="all",
        help="e.g. 0-4, 0,2 or all (REALTALK: the chat numbers, e.g. 1-3)",
    )
    parser.add_argument("--eval-dir", type=Path, help="where make_vault.py and score.py are")
    parser.add_argument("--llm-url", help="an OpenAI-compatible endpoint for flush and dream")
    parser.add_argument("--llm-model", help="the model to ask there")
    parser.add_argument("--json-out", type=Path, help="write the figures here")
    parser.add_argument(
        "--results",
        metavar="SPLIT",
        help="also record the overall figures under SPLIT in bench/results/capture.json",
    )
    parser.add_argument("--keep", type=Path, help="build the vaults here and keep them")
    parser.add_argument(
        "--reuse",
        type=Path,
        help="take the raw and flushed vaults (and their caches) from an earlier run's --keep",
    )
    parser.add_argument(
        "--misses", action="store_true", help="print the answers the flushed vault lost"
    )
    args = parser.parse_args(argv)
    if args.llm_url and not args.llm_model:
        parser.error("--llm-url needs --llm-model")

    make_vault, score = eval_tools(args.data, args.eval_dir)
    samples = load_samples(args.data, args.conversations, make_vault, args.eval_dir)
    llm = llm_settings(args.llm_url, args.llm_model)
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    results = []
    with tempfile.TemporaryDirectory(prefix="eval-capture-") as tmp:
        work = args.keep or Path(tmp)
        if args.keep and work.exists():
            shutil.rmtree(work)
        for index, sample in samples:
            result = run_conversation(index, sample, work, make_vault, score, llm, args.reuse)
            results.append(result)
            print(
                f"{result.label}: {result.flush['entries']} entries flushed "
                f"({result.flush['seconds']:.1f} s), dream {result.dream['status']} "
                f"+{result.dream['added']} ({result.dream['seconds']:.1f} s), "
                f"{result.seconds:.0f} s in all",
                file=sys.stderr,
            )
    mode = "llm " + str(args.llm_model) if llm else "offline"
    print(
        f"eval_capture: {args.data.name}, conversations {args.conversations}, {mode}, "
        f"{BUDGET:,}-character context"
    )
    print(table(results))
    print(LEGEND)
    if args.misses:
        for r in results:
            for miss in r.misses:
                print(
                    f"  {r.label} lost [{miss['category']}] {miss['question']} -> {miss['answer']}"
                )
    figures = totals(results)
    if args.json_out:
        payload = {
            **figures,
            "mode": mode,
            "data": str(args.data),
            "conversations": args.conversations,
            "seconds_median": statistics.median(r.seconds for r in results),
            "per_conversation": {
                r.label: {
                    "questions": r.questions,
                    "answered": r.answered,
                    "observations": [r.observations_kept, r.observations],
                    "chars": r.chars,
                    "memory_md": r.memory,
                    "flush": r.flush,
                    "dream": r.dream,
                    "seconds": round(r.seconds, 1),
                }
                for r in results
            },
        }
        args.json_out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    if args.results:
        record_results(args.results, figures, mode)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
