"""Labelled pairs for superseded facts, written before the rules of
search/supersede.py were: (older, newer, label). `True`: the newer text states a different value
for the same subject and attribute, so the older one is superseded. `False`: look-alikes that are
not contradictions (two people, two services, additive facts, the same value again, unrelated).
The rules were then written against these pairs; bench/supersede.py prints precision and recall.
"""

from __future__ import annotations

PAIRS: list[tuple[str, str, bool]] = [
    # a thing's platform changes
    ("Billing runs on MySQL.", "Billing moved to PostgreSQL.", True),
    (
        "The billing service runs on MySQL 8.",
        "We migrated billing to PostgreSQL 16 last night.",
        True,
    ),
    (
        "Chose MongoDB for the events store. #decision",
        "Chose ClickHouse for the events store.",
        True,
    ),
    ("The API is hosted on Heroku.", "The API moved to Fly.io this week.", True),
    (
        "Search runs on Elasticsearch.",
        "Search switched to OpenSearch after the licence change.",
        True,
    ),
    ("The website is deployed on Netlify.", "The website is now deployed on Vercel.", True),
    (
        "Billing-core runs on PostgreSQL 14.",
        "billing-core no longer runs on PostgreSQL 14; it runs on CockroachDB now.",
        True,
    ),
    ("CI runs on Jenkins.", "CI moved from Jenkins to GitHub Actions.", True),
    # where people live and work, their roles
    ("Jonas lives in Hamburg.", "Jonas moved to Berlin in October.", True),
    ("Priya works at Klarna.", "Priya works at Spotify now.", True),
    ("Tomás works for Ledgerly as a designer.", "Tomás joined Figma in November.", True),
    ("Maya's manager is Henrik.", "Maya's manager is now Sofia.", True),
    (
        "The team lead for payments is Ana.",
        "The team lead for payments is Erik since Monday.",
        True,
    ),
    (
        "Zoë's phone number is +46 70 111 22 33.",
        "Zoë's phone number changed to +46 70 999 88 77.",
        True,
    ),
    ("The office is located in Södermalm.", "The office relocated to Kungsholmen.", True),
    ("The release deadline is 30 November.", "The release deadline is now 14 December.", True),
    ("Our cloud provider is AWS.", "Our cloud provider is now Google Cloud.", True),
    (
        "The staging database is db-staging-1.",
        "The staging database is db-staging-2 from today.",
        True,
    ),
    # look-alikes: two people, two services, additive facts, same value, unrelated
    ("Jonas lives in Hamburg.", "Maya lives in Berlin.", False),
    ("Priya works at Klarna.", "Erik works at Spotify.", False),
    ("Billing runs on MySQL.", "Payments run on PostgreSQL.", False),
    ("The API is hosted on Heroku.", "The docs site is hosted on Netlify.", False),
    ("Billing uses PostgreSQL.", "Billing uses Redis for caching.", False),
    ("Maya speaks Swedish.", "Maya speaks English too.", False),
    ("Billing runs on PostgreSQL 16.", "Billing runs on PostgreSQL.", False),
    (
        "Chose PostgreSQL 16 for billing-core. #decision",
        "Billing-core runs on PostgreSQL 16 since the migration.",
        False,
    ),
    ("Maya's manager is Henrik.", "Henrik's manager is Sofia.", False),
    ("Jonas moved to Berlin in October.", "Jonas moved the standup to 9:30.", False),
    ("The release deadline is 30 November.", "The invoice deadline is 5 December.", False),
    ("Maya prefers short answers with code first.", "Maya prefers Loom videos over docs.", False),
    ("Billing runs on MySQL.", "Billing had an outage on Tuesday.", False),
    ("Jonas goes on parental leave from 1 January.", "Jonas is back from leave in April.", False),
    ("Our cloud provider is AWS.", "Our email provider is Google Workspace.", False),
    ("CI runs on Jenkins.", "CI is slow on Mondays.", False),
    ("Priya works at Klarna.", "Priya works on the checkout redesign.", False),
    ("The office is located in Södermalm.", "The warehouse is located in Solna.", False),
    ("Zoë's phone number is +46 70 111 22 33.", "Zoë's email is zoe@ledgerly.example.", False),
    ("Maya lives in Stockholm.", "Maya's sister lives in Oslo.", False),
]

# Held out: written after the rules were settled on PAIRS and never used to change them.
HELD_OUT: list[tuple[str, str, bool]] = [
    ("The mobile app is built on React Native.", "The mobile app moved to Flutter.", True),
    ("Sofia lives in Malmö.", "Sofia relocated to Copenhagen in the spring.", True),
    ("Erik works at Volvo.", "Erik joined Northvolt.", True),
    ("The invoice service runs on Java 11.", "The invoice service runs on Java 21 now.", True),
    ("Our DNS provider is GoDaddy.", "Our DNS provider is now Cloudflare.", True),
    ("Ana's dentist is Dr. Berg.", "Ana's dentist is Dr. Lund since March.", True),
    ("The queue is RabbitMQ.", "We migrated the queue to Kafka.", True),
    ("Backups run on a cron job on box-3.", "Backups no longer run on box-3.", True),
    (
        "Chose Stripe for card payments. #decision",
        "Chose Adyen for card payments after the pricing review. #decision",
        True,
    ),
    ("The design review is on Tuesdays.", "The design review moved to Thursdays.", True),
    ("Sofia lives in Malmö.", "Sofia's brother lives in Lund.", False),
    ("Erik works at Volvo.", "Erik works on the battery dashboard.", False),
    ("The invoice service runs on Java 21.", "The ledger service runs on Kotlin.", False),
    ("Our DNS provider is Cloudflare.", "Our payment provider is Adyen.", False),
    ("The mobile app is built on Flutter.", "The mobile app uses Firebase for push.", False),
    ("Ana speaks Portuguese.", "Ana speaks Spanish as well.", False),
    ("Chose Stripe for card payments. #decision", "Chose Klarna for invoices. #decision", False),
    ("The queue is Kafka.", "The queue is full again on Mondays.", False),
    ("Erik moved to Gothenburg.", "Erik moved the retro to Friday.", False),
    ("The invoice service runs on Java 21.", "The invoice service runs on Java 21 LTS.", False),
]
