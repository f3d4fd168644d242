"""What a dream must never promote: one case per kind of junk similar tools let through, and
real facts (from sample_vault/) that look a little like junk but are not."""

from __future__ import annotations

import pytest

from vault_memory.dream.junk import clean, is_junk, junk_reason


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # shell commands
        ("git push --force origin main", "shell command"),
        ("$ make test", "shell command"),
        ("`rm -rf build/`", "shell command"),
        ("ls -la | grep invoices", "shell command"),
        ("pip install -e .[test]", "shell command"),
        ("cd ~/src/billing-core && make migrate", "shell command"),
        ("kubectl -n billing rollout restart deploy/renderer", "shell command"),
        ("sudo systemctl restart pgbouncer", "shell command"),
        # code
        ("def prorate(amount, start, end):", "code"),
        ("const total = lines.reduce((a, b) => a + b, 0);", "code"),
        ("SELECT id, total FROM invoices WHERE tenant_id = 42", "code"),
        ("```python", "code block"),
        ("}", "code"),
        ("`invoice_counters.next_value`", "code"),
        # metadata
        ("model=gpt-4o-mini tokens_in=2311 tokens_out=418 latency_ms=2140", "metadata"),
        ("session_id=5e3b user=maya messages=14 redacted=1", "metadata"),
        ("session_id: 5e3b", "metadata"),
        ("2026-11-21T19:45:12Z", "metadata"),
        ("Status: done", "metadata"),
        # bare URLs
        ("https://buildkite.com/ledgerly/billing-core-ci/builds/4411", "bare URL"),
        ("<https://ledgerly.atlassian.net/browse/INV-212>", "bare URL"),
        ("[https://example.com](https://example.com)", "bare URL"),
        # fragments and half-sentences
        ("and then the", "fragment"),
        ("TODO", "placeholder"),
        ("WIP", "placeholder"),
        ("Drafted the pgloader command for the backfill:", "fragment"),
        ("Options for the renderer fix were (a) fonts, (b", "fragment"),
        ("we should probably look into…", "fragment"),
        ("Asked Jonas whether we could move the", "fragment"),
        # too short
        ("ok", "too short"),
        ("Fixed it.", "too short"),
        ("Tea, not coffee.", "too short"),
        ("", "empty"),
        ("#todo #important", "empty"),
    ],
)
def test_junk_is_recognised(text: str, kind: str) -> None:
    reason = junk_reason(text)
    assert reason is not None, text
    assert kind in reason, (text, reason)
    assert is_junk(text)


@pytest.mark.parametrize(
    "text",
    [
        "Chose PostgreSQL 16 for the billing-core service. #decision",
        "Maya prefers `uv` over pip, and hand-written SQL migrations over ORM-generated ones.",
        "Invoice numbers must be gapless per tenant (Bokföringslagen). #decision #important",
        "Make sure the renderer image always installs fonts-noto-core.",
        "Git history is the second backup for MEMORY.md.",
        "Watch the renderer queue closely during the month-end batch.",
        "Find the owner of every quarantined test before it expires.",
        "Correction: the migration window is Saturday 14 Nov, 06:00–10:00 CET, not Friday.\n"
        "Tomás pointed out that customers send month-end invoices on Friday evening.",
        "Jürgen's birthday is 3 December.",
        "Docs: British spelling is fine, don't fix it.",
        "Fix: one UUIDv7 per request, plus a per-entry suffix (`:refund`, `:fee`). #decision",
        "See https://ledgerly.atlassian.net/browse/BIL-1460 for the MySQL decommission plan.",
    ],
)
def test_facts_are_not_junk(text: str) -> None:
    assert junk_reason(text) is None, (text, junk_reason(text))


def test_clean_drops_bullets_comments_and_tags() -> None:
    text = "- Billing runs on PostgreSQL. #decision <!-- src: memory/2026-11-22.md#L4 -->\n  more"
    assert clean(text) == "Billing runs on PostgreSQL. more"
