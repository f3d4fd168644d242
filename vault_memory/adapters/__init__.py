"""Memory in the shapes agent frameworks expect, kept as the vault's own files.

    langgraph_store   LangGraph's `BaseStore`: a namespace is a scope, an item a note of it
                      (`scopes/<namespace>/notes/store/<key>.md`), searched by the vault
    agents_session    the OpenAI Agents SDK's `Session`: the items are a session transcript
                      (`sessions/DATE-<session id>.md`), continued with `vault sessions`
    items             the item files (framework-free); responses: items <-> transcript messages

They sit above the facade, as agents/ does: they are handed a `Vault` (or its path) and
nothing below imports them. Each framework is an optional extra
(`pip install 'vault-memory[langgraph]'`, `'vault-memory[agents]'`); importing an adapter
without it says so.
"""
