"""`python -m vault_memory ...` is `vault ...` (used by subprocess tests and the MCP config)."""

from .cli import main

if __name__ == "__main__":
    main()
