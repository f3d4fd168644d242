"""`python -m vault_memory.cli`."""

from .app import main

main()
