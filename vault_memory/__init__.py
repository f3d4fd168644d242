"""vault-memory: a durable memory for AI agents made of plain Markdown files.

    from vault_memory import Vault
    vault = Vault("~/agent-memory")
    vault.add("Chose PostgreSQL for the billing service", tags=("decision",))
"""

from .errors import NoteChangedError, VaultError
from .vault import Vault

__all__ = ["NoteChangedError", "Vault", "VaultError"]
__version__ = "0.1.0"
