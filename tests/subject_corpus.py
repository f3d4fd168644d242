"""Subject keys, labelled: (older, newer, label) pairs in the wording people use in notes, chats
and MEMORY.md, written to develop search/subjects.py (tests/supersede_corpus.py holds the
earlier pairs). `True`: the newer text gives another value for the same subject and attribute.
`False`: a near miss (same words, another subject: a sibling region or product, another
person, another attribute), an additive fact, or the same value said again.

KEYS: (text, the subject key it states, or None when it states none).
"""

from __future__ import annotations

PAIRS: list[tuple[str, str, bool]] = [
    # roles
    ("Zoë Okafor: product manager for invoicing.", "Zoë is now head of product.", True),
    (
        "Zoë Okafor: product manager for invoicing.",
        "Zoë was promoted to Director of Product.",
        True,
    ),
    ("Lars is a junior developer on the web team.", "Lars got promoted to senior developer.", True),
    ("Nadia works as a data analyst.", "Nadia works as a data scientist now.", True),
    ("Kofi is the release manager.", "Kofi took over as engineering manager.", True),
    (
        "Zoë Okafor: product manager for invoicing.",
        "Zoë Okafor: product manager for invoicing.",
        False,
    ),
    ("Zoë Okafor: product manager for invoicing.", "Zoë Okafor lives in Oslo.", False),
    (
        "Zoë Okafor: product manager for invoicing.",
        "Yusuf is the product manager for payments.",
        False,
    ),
    ("Kofi is the release manager.", "Kofi is the release manager for the mobile app too.", False),
    # employers
    ("Maya works at Ledgerly.", "Maya joined Adyen in March.", True),
    ("Tariq works for Spotify.", "Tariq left Spotify for Klarna.", True),
    ("Hanna is employed by Ericsson.", "Hanna started at Volvo Cars on Monday.", True),
    ("Maya works at Ledgerly.", "Maya works on the ledger export.", False),
    ("Maya works at Ledgerly.", "Maya joined the call late.", False),
    ("Maya works at Ledgerly.", "Maya's brother works at Adyen.", False),
    ("Tariq works for Spotify.", "Tariq works with Spotify's data team on a pilot.", False),
    # places
    ("Ines lives in Lisbon.", "Ines moved to Porto last month.", True),
    ("Ines lives in Lisbon.", "Ines relocated to Madrid.", True),
    ("Ahmed is based in Cairo.", "Ahmed is based in Dubai now.", True),
    ("Ines lives in Lisbon.", "Ines's parents live in Faro.", False),
    ("Ines lives in Lisbon.", "Ines visited Porto last weekend.", False),
    ("The Berlin office is located in Mitte.", "The Munich office is located in Schwabing.", False),
    # platforms and systems
    (
        "The billing database runs on PostgreSQL 14.",
        "The billing database runs on PostgreSQL 16 now.",
        True,
    ),
    ("Billing DB: MySQL 5.7", "We migrated the billing database to PostgreSQL.", True),
    (
        "The EU billing database runs on PostgreSQL 14.",
        "The US billing database moved to PostgreSQL 16.",
        False,
    ),
    (
        "The EU billing database runs on PostgreSQL 14.",
        "The billing database moved to PostgreSQL 16.",
        False,
    ),
    ("The billing database runs on PostgreSQL.", "The billing database runs on Postgres.", False),
    ("The billing database runs on PostgreSQL 14.", "The billing cache runs on Redis.", False),
    ("Our CDN is Fastly.", "We switched the CDN to Cloudflare.", True),
    ("The job queue is RabbitMQ.", "The job queue now runs on SQS.", True),
    ("The staging cluster runs on GKE.", "The production cluster runs on EKS.", False),
    ("Our CDN is Fastly.", "Our CDN bill went up again.", False),
    ("The Android app is built with Kotlin.", "The iOS app is built with Swift.", False),
    (
        "The Android app is built with Kotlin.",
        "The Android app moved to Kotlin Multiplatform.",
        True,
    ),
    # meetings, times, days, dates
    ("Standup is at 09:30.", "Standup moved to 10:00.", True),
    ("Daily standup: 9:30 on weekdays.", "From Monday the standup starts at 9:45.", True),
    ("The design review is on Tuesdays.", "Design review moved to Thursdays.", True),
    ("The launch is on 12 March.", "The launch was pushed to 19 March.", True),
    ("Release deadline: 30 November.", "The release deadline is now 14 December.", True),
    ("Standup is at 09:30.", "Standup is at 9:30am.", False),
    ("Standup is at 09:30.", "The retro is at 15:00.", False),
    ("The launch is on 12 March.", "The beta launch is on 2 March.", False),
    (
        "The design review is on Tuesdays.",
        "The design review is on Tuesday afternoons in room 4.",
        False,
    ),
    ("Standup is at 09:30.", "Standup was short today.", False),
    # people someone has
    ("Jonas is Maya's manager.", "Maya reports to Karin now.", True),
    ("Maya's manager is Jonas.", "Karin is Maya's new manager.", True),
    ("Jonas is Maya's manager.", "Jonas is Erik's manager.", False),
    ("Maya reports to Jonas.", "Erik reports to Karin.", False),
    ("Ana's dentist is Dr. Berg.", "Ana's doctor is Dr. Lund.", False),
    # owners
    ("Priya owns the invoicing service.", "Ahmed took over the invoicing service.", True),
    ("The invoicing service is owned by Priya.", "Ahmed now owns invoicing.", True),
    ("Priya owns the invoicing service.", "Priya owns the payouts service.", False),
    ("Priya owns the invoicing service.", "Ahmed owns the payouts service.", False),
    # contact details, prices, names
    (
        "Tomás's phone number is +46 70 123 45 67.",
        "Tomás has a new number: +46 73 765 43 21.",
        True,
    ),
    ("Tomás: +46 70 123 45 67", "Tomás's phone number is +46 73 765 43 21.", True),
    (
        "Tomás's email is tomas@ledgerly.example.",
        "Tomás's email is now t.ruiz@adyen.example.",
        True,
    ),
    (
        "Tomás's phone number is +46 70 123 45 67.",
        "Tomás's email is tomas@ledgerly.example.",
        False,
    ),
    ("The Pro plan costs €20 a month.", "The Pro plan costs €25 a month from July.", True),
    ("The Pro plan costs €20 a month.", "The Team plan costs €45 a month.", False),
    ("Our dog is called Pixel.", "Our cat is called Miso.", False),
    # decisions
    ("Chose Stripe for card payments. #decision", "We went with Adyen for card payments.", True),
    ("Chose Stripe for card payments. #decision", "Chose Klarna for invoices. #decision", False),
    # additive and unrelated
    ("Maya speaks Swedish.", "Maya speaks English too.", False),
    ("Billing uses PostgreSQL.", "Billing uses Redis for caching.", False),
    ("Maya prefers short answers.", "Maya prefers code first.", False),
    ("The queue is RabbitMQ.", "The queue is full again.", False),
    ("The queue is RabbitMQ.", "The queue is slow on Mondays.", False),
    ("Maya lives in Stockholm.", "Maya is in Berlin for a conference this week.", False),
]

KEYS: list[tuple[str, str | None]] = [
    ("Zoë Okafor: product manager for invoicing.", "zoë okafor / role"),
    ("The billing database runs on PostgreSQL 16.", "billing / database"),
    ("Billing DB: MySQL 5.7", "billing / database"),
    ("Standup is at 09:30.", "standup / time"),
    ("Standup moved to 10:00.", "standup / time"),
    ("The design review is on Tuesdays.", "design review / day"),
    ("Maya works at Ledgerly.", "maya / employer"),
    ("Ines lives in Lisbon.", "ines / place"),
    ("Jonas is Maya's manager.", "maya / manager"),
    ("Tomás's phone number is +46 70 123 45 67.", "tomás / phone"),
    ("Priya owns the invoicing service.", "invoicing / owner"),
    ("Maya speaks Swedish.", None),
    ("We had a great time at the lake.", None),
    ("She moved to Berlin.", None),
]
