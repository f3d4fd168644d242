"""The wheel users install: build it from this checkout, install it (not editable) into a fresh
virtual environment, and run that environment's `vault` on a new vault."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = REPO_ROOT / "templates"


def run(
    *args: str | Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", out, REPO_ROOT, cwd=out)
    [built] = out.glob("vault_memory-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    """A venv that sees the system's dependencies (no downloads) but has its own, non-editable
    vault-memory installed from the wheel."""
    home = tmp_path_factory.mktemp("venv")
    env_dir = home / "env"
    run(sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", env_dir, cwd=home)
    python = env_dir / "bin" / "python"
    # The dependencies as this test's environment has them (a venv's "system" packages are
    # its base interpreter's, which need not hold them): its site-packages, after the new
    # venv's own, as plain paths (their .pth files, an editable install's among them, unread).
    own = run(
        python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=home
    ).stdout.strip()
    outer = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    (Path(own) / "_test_environment.pth").write_text("\n".join(outer) + "\n")
    run(
        python,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-deps",
        "--ignore-installed",
        "--no-compile",
        wheel,
        cwd=home,
        env=clean_env(),
    )
    return env_dir


def clean_env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("VAULT_") and k not in {"PYTHONPATH", "PYTHONHOME"}
    }
    env["PYTHONNOUSERSITE"] = "1"
    return env


def test_the_wheel_ships_templates_and_model_files(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for template in TEMPLATES.rglob("*"):
        if template.is_file():
            assert f"vault_memory/templates/{template.relative_to(TEMPLATES).as_posix()}" in names
    for name in (
        "tokenizer.json",
        "tokenizer_config.json",
        "config.json",
        "special_tokens_map.json",
        "LICENSE",
        "NOTICE",
    ):
        assert f"vault_memory/model/{name}" in names
    assert "vault_memory/py.typed" in names
    assert "vault_memory/files/__init__.pyi" in names  # what lazy_loader reads at import
    assert not any(name.startswith(("tests/", "sample_vault/", "bench/")) for name in names)


def test_installed_vault_init_add_get(venv: Path, tmp_path: Path) -> None:
    env = clean_env()
    bin_dir = venv / "bin"
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    where = run(
        bin_dir / "python",
        "-c",
        "import vault_memory, vault_memory.vault as v; "
        "print(vault_memory.__file__); print(v.template_dir())",
        cwd=tmp_path,
        env=env,
    ).stdout.splitlines()
    site = next((venv / "lib").glob("python3*/site-packages"))
    assert Path(where[0]).is_relative_to(site), where  # the wheel, not the editable checkout
    assert Path(where[1]) == site / "vault_memory" / "templates"

    vault = bin_dir / "vault"
    assert run(vault, "--version", cwd=tmp_path, env=env).stdout.startswith("vault, version ")
    init = run(vault, "init", "my-vault", cwd=tmp_path, env=env)
    assert "Vault ready at" in init.stdout
    root = tmp_path / "my-vault"
    assert (root / "MEMORY.md").read_bytes() == (TEMPLATES / "vault" / "MEMORY.md").read_bytes()
    assert (root / "vault.toml").read_bytes() == (TEMPLATES / "vault" / "vault.toml").read_bytes()
    assert ".vault/" in (root / ".gitignore").read_text().splitlines()
    assert "memory/*.md merge=union" in (root / ".gitattributes").read_text().splitlines()
    assert (root / "memory").is_dir() and (root / "dreams").is_dir()

    add = run(vault, "add", "Chose PostgreSQL for billing", "--tag", "decision", cwd=root, env=env)
    match = re.fullmatch(r"(memory/(\d{4}-\d{2}-\d{2})\.md):(\d+)-(\d+)  (.+)\n", add.stdout)
    assert match, add.stdout
    path, day, start, end = match[1], match[2], int(match[3]), int(match[4])
    assert (root / path).read_text().startswith(f"# {day}\n")

    got = run(vault, "get", f"{path}:{start}-{end}", cwd=root / "memory", env=env)
    assert got.stdout == f"## {match[5]}\n- Chose PostgreSQL for billing #decision\n"
    whole = run(vault, "--vault", root, "get", "MEMORY.md", cwd=tmp_path, env=env)
    assert whole.stdout == (root / "MEMORY.md").read_text()

    failed = subprocess.run(
        [vault, "get", "../outside.md"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert failed.returncode == 1
    assert failed.stderr.startswith("Error: refusing '../outside.md'")
