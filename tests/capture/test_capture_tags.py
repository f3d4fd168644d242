"""The tags `vault flush` gives entries, judged against a small set labelled by hand.

Every sentence here was written for this test (none is taken from a benchmark): what people
tell an agent about their work and what friends tell each other, each labelled with what it
is — a decision (chosen, agreed, settled), a preference (a taste or a standing wish), a
commitment (something the speaker will do, with or without a date) or a fact. A sentence the
rules leave out counts as wrong. The target is an accuracy of at least 0.9 over the set, and
each known complaint is checked on its own.
"""

from __future__ import annotations

import pytest

from vault_memory.capture.conversation import Message
from vault_memory.capture.extract import classify, extract_offline

# (role, sentence, label)
LABELLED: list[tuple[str, str, str]] = [
    # decisions
    ("user", "We decided to use uv instead of pip.", "decision"),
    ("user", "We went with Redis rather than Memcached for the session cache.", "decision"),
    ("user", "After the review we settled on weekly releases.", "decision"),
    ("user", "The team agreed to freeze the schema until March.", "decision"),
    ("user", "We're switching from Jenkins to GitHub Actions next sprint.", "decision"),
    ("user", "I chose Hetzner over AWS for the staging boxes, it is half the price.", "decision"),
    ("user", "Decision: invoices are immutable once sent.", "decision"),
    ("user", "Let's go with the monorepo instead of separate repositories.", "decision"),
    ("user", "We picked Postgres over MongoDB because we need transactions.", "decision"),
    ("user", "Final call: the launch moves to the second week of May.", "decision"),
    ("assistant", "We agreed to keep the old API alive for 90 days.", "decision"),
    ("assistant", "Decision: the cron job runs at 02:00 UTC from now on.", "decision"),
    ("user", "We opted for a flat fee instead of per-seat pricing.", "decision"),
    ("user", "My partner and I decided to move to Lisbon next year.", "decision"),
    # preferences
    ("user", "I prefer tabs over spaces in Go files.", "preference"),
    ("user", "Please always answer in British English.", "preference"),
    ("user", "I'd rather get one long email than five short ones.", "preference"),
    ("user", "Never reformat files you were not asked to touch.", "preference"),
    ("user", "I hate meetings before ten in the morning.", "preference"),
    ("user", "My favourite editor is Helix.", "preference"),
    ("user", "I love hiking in the Dolomites in September.", "preference"),
    ("user", "I don't like ORMs, plain SQL is easier to review.", "preference"),
    ("user", "I really enjoy baking sourdough on Sunday mornings.", "preference"),
    ("user", "From now on, put the summary before the details.", "preference"),
    ("user", "I'm not a fan of dark mode for long documents.", "preference"),
    ("user", "We prefer squash merges on the main branch.", "preference"),
    ("user", "Avoid exclamation marks in customer emails.", "preference"),
    # commitments
    ("user", "I'll send the contract to Ines by Friday.", "commitment"),
    ("user", "I need to renew my passport before the trip in June.", "commitment"),
    ("user", "Remind me to call the plumber tomorrow.", "commitment"),
    ("user", "We have to submit the grant report by 30 September.", "commitment"),
    ("user", "I'm going to visit my grandmother in Gdańsk next month.", "commitment"),
    ("user", "I promised to review Tomasz's pull request tonight.", "commitment"),
    ("user", "The deadline for the tax return is 31 July.", "commitment"),
    ("assistant", "I'll open the pull request by Friday.", "commitment"),
    ("assistant", "I will send you the summary tomorrow morning.", "commitment"),
    ("assistant", "From now on I will answer in English.", "commitment"),
    ("user", "I plan to run the half marathon in October.", "commitment"),
    ("user", "I'll book the flights to Oslo this weekend.", "commitment"),
    ("assistant", "I'll remind you about the invoice on Monday.", "commitment"),
    # facts
    ("user", "My sister lives in Porto.", "fact"),
    ("user", "Our staging cluster runs Kubernetes 1.29.", "fact"),
    ("user", "I work as a nurse at the children's hospital.", "fact"),
    ("user", "The nightly backup takes about forty minutes.", "fact"),
    ("user", "Priya owns the payments module.", "fact"),
    ("user", "I have two cats, Miso and Tofu.", "fact"),
    ("user", "We adopted a greyhound from the shelter in 2021.", "fact"),
    ("user", "My daughter started school in Leeds last autumn.", "fact"),
    ("user", "The build server is called ci-runner-03.", "fact"),
    ("user", "Remember that the VPN drops every 8 hours.", "fact"),
    ("assistant", "The root cause was an expired TLS certificate.", "fact"),
    ("assistant", "The migration has been completed on all three replicas.", "fact"),
    ("user", "I was born in Tampere but grew up in Helsinki.", "fact"),
    ("user", "Jonas is on parental leave until April.", "fact"),
    ("user", "I ran my first marathon in Berlin in 2019.", "fact"),
    ("user", "Our office moved to the fourth floor in January.", "fact"),
]


def label_of(role: str, sentence: str) -> str | None:
    found = classify(sentence, role)
    return found[0] if found else None


def test_the_tags_match_the_hand_labels() -> None:
    wrong = [(s, want, label_of(r, s)) for r, s, want in LABELLED if label_of(r, s) != want]
    accuracy = 1 - len(wrong) / len(LABELLED)
    assert accuracy >= 0.9, f"accuracy {accuracy:.3f}; wrong: {wrong}"


def test_the_labelled_set_covers_every_tag_and_both_roles() -> None:
    labels = {label for _, _, label in LABELLED}
    assert labels == {"decision", "preference", "commitment", "fact"}
    assert {role for role, _, _ in LABELLED} == {"user", "assistant"}
    assert all(sum(1 for *_, lab in LABELLED if lab == label) >= 10 for label in labels)


@pytest.mark.parametrize(
    ("sentence", "label"),
    [
        # a decision that names what it replaced is a decision, not a preference
        ("We decided to use uv instead of pip.", "decision"),
        ("We went with Redis rather than Memcached.", "decision"),
        ("We chose Hetzner instead of AWS.", "decision"),
        # a plain preference stays one
        ("I prefer uv over pip.", "preference"),
        ("Use tabs instead of spaces in Makefiles.", "preference"),
    ],
)
def test_decided_instead_of_is_a_decision(sentence: str, label: str) -> None:
    assert label_of("user", sentence) == label


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        # an assistant's standing promise, however it opens, and a promise tied to a moment of
        # the day's work, are commitments it must keep: flush writes them down
        ("Going forward, I'll run the linter before every commit.", True),
        ("Understood. I'll write the tests first from now on.", True),
        ("Next time I will ask before deleting a branch.", True),
        ("I will use British spelling in all future replies.", True),
        ("I'll send you the revised estimate right after the meeting.", True),
        ("I promise to double-check the migrations before the release.", True),
        # the next step of the work at hand is not
        ("I'll check the logs.", False),
        ("I'll add tests for every function in this file.", False),
        ("I'll fix the typo in the README.", False),
    ],
)
def test_an_assistants_commitment_is_kept(said: str, kept: bool) -> None:
    entries = extract_offline([Message("assistant", said)], 400)
    assert [e.category for e in entries] == (["commitment"] if kept else [])


@pytest.mark.parametrize(
    ("sentence", "decision"),
    [
        ("We made the decision to move the office to Leeds.", True),
        ("We're going with Redis for the cache.", True),
        ("Decision: ship it on Monday.", True),
        # a decision pondered or a phrase that only looks like one
        ("It's a big decision, but I think I'm ready to adopt.", False),
        ("It's normal to be nervous before a big decision like that.", False),
        ("Playing every week keeps me going with my other hobbies.", False),
    ],
)
def test_a_decision_is_one_made(sentence: str, decision: bool) -> None:
    assert (label_of("user", sentence) == "decision") is decision
