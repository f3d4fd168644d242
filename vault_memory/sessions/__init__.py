"""Sessions you can pick up again: the conversation itself as a redacted Markdown transcript
(`sessions/DATE-ID.md`, appended by every flush), continued within a token budget, its messages
threaded into a tree, pruned when old, and the graph of what sessions left behind.

    transcript   the file format, read back, and the locked idempotent append
    resume       the newest messages that fit a budget, the older ones as a running summary
    threads      which earlier message a new one continues (embeddings, a model, or the last)
    prune        old transcripts deleted (a git commit makes it undoable)
    graph        a session's thread tree; sessions -> entries -> MEMORY.md; as Mermaid or JSON

Names are loaded on first use (lazy_loader reads them from `__init__.pyi`), so importing
the package costs nothing.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
