"""Process-wide switches of the index layer, set by the CLI before anything heavy is imported
(this module imports nothing)."""

#: Whether a `QueryEncoder` builds its optimised model session in the background (from its
#: second query on, or when `Vault.prepare_search` asks). A one-shot
#: `vault search` process turns it off: it answers one query and exits, and the 0.3 s of CPU
#: would compete with the search on a busy machine.
optimize_query_session = True
