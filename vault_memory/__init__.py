"""vault-memory: a durable memory for AI agents made of plain Markdown files.

from vault_memory import Vault
vault = Vault("~/agent-memory")
vault.add("Chose PostgreSQL for the billing service", tags=("decision",))
for hit in vault.search("which database for billing?"):
    print(hit.path, hit.start_line, hit.text)
"""

TYPE_CHECKING = False  # not typing's: `vault search` through a watcher never imports typing
__all__ = ["ConversationWindow", "Hit", "NoteChangedError", "Vault", "VaultError"]
__version__ = "0.1.0"

if TYPE_CHECKING:
    from .agents import ConversationWindow
    from .errors import NoteChangedError, VaultError
    from .search import Hit
    from .vault import Vault


def __getattr__(name: str) -> object:
    # Imported on first use so that `vault --help` does not pay for the library.
    if name == "Vault":
        from .vault import Vault

        return Vault
    if name == "Hit":
        from .search import Hit

        return Hit
    if name == "ConversationWindow":
        from .agents import ConversationWindow

        return ConversationWindow
    if name in ("VaultError", "NoteChangedError"):
        from . import errors

        return getattr(errors, name)
    raise AttributeError(f"module 'vault_memory' has no attribute {name!r}")
