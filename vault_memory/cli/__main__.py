"""`python -m vault_memory.cli`."""

from . import main

main()
