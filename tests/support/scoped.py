"""A vault with scopes, for the scope tests: the root, org, org/acme, two agents of acme (alpha,
the one the tests bind to, and beta, its sibling), a scope below alpha (sub, its descendant),
another organisation (other, a cousin) and a file outside the vault, each holding a canary word
no other file has, and symlinks from alpha's folder into beta's and out of the vault.

    root, canaries = build(tmp_path / "vault")

`ALPHA` is the scope under test; `SEEN` the canaries it may read (its own and those above it);
`HIDDEN` those it must never read; `forbidden(root)` the real paths it must never touch.
"""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

from hypothesis.configuration import set_hypothesis_home_dir

from vault_memory import Vault

# The property tests of the scopes keep hypothesis's caches out of the checkout.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "vault-memory-hypothesis")

NOW = "2026-11-22T09:30"
TODAY = dt.date(2026, 11, 22)
YESTERDAY = TODAY - dt.timedelta(days=1)
ALPHA = ("org", "acme", "agent-alpha")
ALPHA_DIR = "scopes/org/acme/agent-alpha"
BETA_DIR = "scopes/org/acme/agent-beta"
SUB_DIR = f"{ALPHA_DIR}/sub"
OTHER_DIR = "scopes/other"


def _log(day: dt.date, *entries: str) -> str:
    return f"# {day}\n\n" + "\n".join(entries) + "\n"


FILES = {
    "MEMORY.md": "# MEMORY\n\n## Shared\n- Rootcanary: the office is in Oslo. #important\n",
    f"memory/{TODAY}.md": _log(TODAY, "## 08:00 · note", "- Rootlogcanary: fire drill at ten."),
    "scopes/org/MEMORY.md": "# MEMORY\n\n## Org\n- Orgcanary: expenses go through Lena.\n",
    "scopes/org/acme/MEMORY.md": ("# MEMORY\n\n## Acme\n- Acmecanary: Acme deploys on Tuesdays.\n"),
    f"scopes/org/acme/memory/{YESTERDAY}.md": _log(
        YESTERDAY, "## 16:00 · note", "- Acmelogcanary: the release train leaves at five."
    ),
    f"{ALPHA_DIR}/MEMORY.md": (
        "# MEMORY\n\n## Preferences\n- Alphacanary: alpha answers in short bullet points.\n"
    ),
    f"{ALPHA_DIR}/memory/{YESTERDAY}.md": _log(
        YESTERDAY,
        "## 10:00 · flush · session alpha-1",
        "- User: Alphalogcanary: the billing database is PostgreSQL 16. #decision",
    ),
    f"{ALPHA_DIR}/memory/{TODAY}.md": _log(
        TODAY, "## 09:00 · note", "- Alphatodaycanary: call the vendor about invoices."
    ),
    f"{ALPHA_DIR}/notes/plan.md": "# Plan\n\nAlphanotecanary: migrate the invoices in March.\n",
    f"{SUB_DIR}/MEMORY.md": "# MEMORY\n\n- Subcanary: the child keeps its own counsel.\n",
    f"{BETA_DIR}/MEMORY.md": (
        "# MEMORY\n\n## Secrets\n- Betacanary: the billing database password is hunter2.\n"
    ),
    f"{BETA_DIR}/memory/{TODAY}.md": _log(
        TODAY,
        "## 09:10 · flush · session beta-7",
        "- User: Betalogcanary: the billing invoices go out on Fridays. #decision",
    ),
    f"{BETA_DIR}/dreams/{YESTERDAY}.md": "# Dream diary\n\nBetadiarycanary: nothing happened.\n",
    f"{BETA_DIR}/notes/plan.md": "# Plan\n\nBetanotecanary: the billing invoices plan.\n",
    f"{OTHER_DIR}/MEMORY.md": "# MEMORY\n\n- Othercanary: another company's billing secrets.\n",
}
SEEN = [
    "Rootcanary",
    "Rootlogcanary",
    "Orgcanary",
    "Acmecanary",
    "Acmelogcanary",
    "Alphacanary",
    "Alphalogcanary",
    "Alphatodaycanary",
    "Alphanotecanary",
]
HIDDEN = [
    "Subcanary",
    "Betacanary",
    "Betalogcanary",
    "Betadiarycanary",
    "Betanotecanary",
    "Othercanary",
    "Outsidecanary",
]


def build(root: Path, index: bool = True) -> Path:
    """The vault at `root` (initialised, indexed unless `index` is False)."""
    Vault.init(root)
    for relpath, text in FILES.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    outside = root.parent / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.md").write_text("# Outside\n\nOutsidecanary: the billing key.\n")
    notes = root / ALPHA_DIR / "notes"
    (notes / "peek.md").symlink_to(Path("../../agent-beta/MEMORY.md"))  # into the sibling
    (notes / "peekdir").symlink_to(Path("../../agent-beta"), target_is_directory=True)
    (notes / "away.md").symlink_to(outside / "secret.md")  # out of the vault
    (notes / "up.md").symlink_to(Path("../../MEMORY.md"))  # into acme: may be seen
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "peek-beta.md").symlink_to(Path("..") / BETA_DIR / "MEMORY.md")
    if index:
        with Vault(root) as vault:
            vault.index()
    return root


def forbidden(root: Path) -> list[Path]:
    """What a vault bound to ALPHA must never read or write."""
    return [root / BETA_DIR, root / SUB_DIR, root / OTHER_DIR, root.parent / "outside"]


def not_own(root: Path) -> dict[str, bytes]:
    """Every file outside alpha's own folder (and the cache), with its bytes: what a vault bound
    to ALPHA must never change."""
    state = {}
    for path in sorted(root.rglob("*")):
        relpath = path.relative_to(root).as_posix()
        if relpath.startswith(".vault/") or path.is_symlink() or not path.is_file():
            continue
        if relpath.startswith(ALPHA_DIR + "/") and not relpath.startswith(SUB_DIR + "/"):
            continue
        state[relpath] = path.read_bytes()
    for path in sorted((root.parent / "outside").rglob("*")):
        state[str(path)] = path.read_bytes()
    return state
