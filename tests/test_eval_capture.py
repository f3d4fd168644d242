"""bench/eval_capture.py: its measures on hand-written samples, and the whole bench on a tiny
conversation in the LoCoMo JSON shape written here (none of it comes from the benchmark's
data). The bench reuses the benchmark's own `make_vault.py` and `score.py` from
../shared/eval/locomo; without them the end-to-end tests are skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import load_script
from .llm_server import ScriptedLLMServer

BENCH = Path(__file__).resolve().parent.parent / "bench" / "eval_capture.py"


ec = load_script(BENCH, "eval_capture_under_test")
STOP = frozenset(
    {
        "a",
        "the",
        "to",
        "of",
        "in",
        "on",
        "and",
        "did",
        "what",
        "when",
        "is",
        "was",
        "her",
        "his",
        "she",
        "he",
        "i",
        "my",
        "it",
        "for",
        "at",
        "with",
        "no",
        "before",
    }
)  # a subset of the scorer's list


@pytest.mark.parametrize(
    ("answer", "context", "contained"),
    [
        (
            "7 May 2026",
            "memory/2026-05-08.md:4-4 (…)\n- Ines: yesterday (2026-05-07) we sailed",
            True,
        ),
        ("7 May 2026", "- Ines: we sailed on 2026-05-08 with 7 friends in May 2026", False),
        ("May 2026", "- the lease started 2026-05-03", True),
        ("The week before 9 June 2026", "2026-06-09 > 10:00\n- Ines: last week we moved", True),
        ("The week before 9 June 2026", "2026-06-10 > 10:00\n- Ines: last week we moved", False),
        ("Greyhound, Pixel", "- Ines: I adopted a greyhound called Pixel", True),
        ("greyhounds", "- Ines: I adopted a greyhound", True),  # a plural is the same word
        ("Two cats and a dog", "- Tomas: we have 2 cats and one dog", True),
        ("Two cats and a dog", "- Tomas: we have 2 cats", False),
        ("Likely no", "anything at all", None),  # no content word: left out of the share
    ],
)
def test_answer_in_context(answer: str, context: str, contained: bool | None) -> None:
    assert ec.answer_in(answer, context, STOP) is contained


TURN = "Hey! I finally adopted a greyhound from the shelter in Braga. His name is Pixel."
OBSERVATION = "Ines adopted a greyhound named Pixel from a shelter in Braga."
NAMES = {"ines", "tomas"}


@pytest.mark.parametrize(
    ("entries", "carried"),
    [
        # hand-checked: each of these holds what the observation took from the turn
        (
            ["Ines: I finally adopted a greyhound from the shelter in Braga. His name is Pixel."],
            True,
        ),
        (["Ines: I finally adopted a greyhound from the shelter in Braga."], True),
        (["Ines adopted a greyhound named Pixel."], True),  # a model's entry, no label
        # and each of these does not
        (["Ines: His name is Pixel."], False),  # a scrap
        (["Ines: I finally adopted"], False),
        (["Tomas: The shelter in Braga has a greyhound called Pixel."], False),  # not hers
        (["Ines: I moved to Porto and started a pottery class."], False),  # another turn
        ([], False),
    ],
)
def test_observation_carried_by_an_entry(entries: list[str], carried: bool) -> None:
    assert ec.carries(TURN, OBSERVATION, entries, NAMES, STOP, "Ines") is carried


def test_event_stated_by_memory() -> None:
    event = "Ines adopts a greyhound from a shelter in Braga."
    assert ec.states(event, ["Ines adopted a greyhound, Pixel, in Braga. <!-- src: x -->"], STOP)
    assert not ec.states(event, ["Ines likes dogs.", "Tomas builds boats."], STOP)


# -- the whole bench on a tiny conversation ---------------------------------------------------


def tiny_sample() -> dict:
    session_1 = [
        ("Ines", "Hey Tomas! Guess what, I adopted a greyhound yesterday. His name is Pixel."),
        ("Tomas", "No way! How is he settling in?"),
        ("Ines", "He sleeps all day on the sofa. I also started a pottery class on Tuesdays."),
        ("Tomas", "I finished building my wooden boat last week. She's called Mirja."),
        ("Ines", "That's amazing, congrats!"),
    ]
    session_2 = [
        ("Tomas", "Hi Ines! We launched Mirja on the river last Saturday."),
        ("Ines", "Wonderful! Pixel and I walked by the harbour and saw her."),
        ("Tomas", "I'm planning a sailing trip to Sweden in August."),
        ("Ines", "Take care and send photos!"),
    ]

    def turns(number: int, rows: list[tuple[str, str]]) -> list[dict]:
        return [
            {"speaker": s, "dia_id": f"D{number}:{i}", "text": t}
            for i, (s, t) in enumerate(rows, 1)
        ]

    return {
        "sample_id": "tiny-1",
        "conversation": {
            "speaker_a": "Ines",
            "speaker_b": "Tomas",
            "session_1_date_time": "6:10 pm on 11 May, 2026",
            "session_1": turns(1, session_1),
            "session_2_date_time": "9:30 am on 20 May, 2026",
            "session_2": turns(2, session_2),
        },
        "observation": {
            "session_1_observation": {
                "Ines": [
                    ["Ines adopted a greyhound named Pixel.", "D1:1"],
                    ["Ines started a pottery class on Tuesdays.", "D1:3"],
                ],
                "Tomas": [["Tomas finished building a wooden boat called Mirja.", "D1:4"]],
            },
            "session_2_observation": {
                "Tomas": [
                    ["Tomas launched his boat Mirja on the river.", "D2:1"],
                    ["Tomas plans a sailing trip to Sweden in August.", "D2:3"],
                ],
                "Ines": [],
            },
        },
        "event_summary": {
            "events_session_1": {
                "Ines": ["Ines adopts a greyhound named Pixel."],
                "Tomas": ["Tomas finishes building his boat."],
                "date": "11 May, 2026",
            },
            "events_session_2": {
                "Tomas": ["Tomas launches his boat Mirja on the river."],
                "Ines": [],
                "date": "20 May, 2026",
            },
        },
        "session_summary": {
            "session_1_summary": "Ines and Tomas catch up.",
            "session_2_summary": "Tomas launched his boat.",
        },
        "qa": [
            {
                "question": "What is the name of Ines's greyhound?",
                "answer": "Pixel",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "When did Ines adopt her greyhound?",
                "answer": "10 May 2026",
                "evidence": ["D1:1"],
                "category": 2,
            },
            {
                "question": "Where is Tomas planning a sailing trip?",
                "answer": "Sweden",
                "evidence": ["D2:3"],
                "category": 4,
            },
            {
                "question": "What did Tomas build?",
                "answer": "a wooden boat",
                "evidence": ["D1:4"],
                "category": 1,
            },
            {
                "question": "Is there anything adversarial?",
                "answer": "n/a",
                "evidence": ["D1:2"],
                "category": 5,
            },
        ],
    }


@pytest.fixture
def tiny_data(tmp_path: Path) -> Path:
    try:
        ec.eval_tools()
    except SystemExit:
        pytest.skip("the benchmark's make_vault.py and score.py are not in ../shared/eval")
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps([tiny_sample()]), encoding="utf-8")
    return path


@pytest.mark.slow
def test_the_bench_runs_on_a_tiny_conversation(
    tiny_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "figures.json"
    assert (
        ec.main(
            [
                "--data",
                str(tiny_data),
                "--conversations",
                "0",
                "--json-out",
                str(out),
                "--keep",
                str(tmp_path / "vaults"),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "overall" in printed and "conv-0" in printed
    figures = json.loads(out.read_text())
    for key in (
        "answer_in_context_raw",
        "answer_in_context_flushed",
        "answer_in_context_dreamed",
        "observation_recall",
        "chars_ratio",
    ):
        assert 0.0 <= figures[key] <= 1.5, key
    assert figures["questions"] == 4  # category 5 is left out
    conv = figures["per_conversation"]["conv-0"]
    assert conv["flush"]["modes"] == {"offline": 2}
    # the flushed vault holds each session on its day, under its session id, dates pinned
    log = (tmp_path / "vaults" / "flushed" / "conv-0" / "memory" / "2026-05-11.md").read_text()
    assert "## 18:10 · flush · session session-1" in log
    assert "yesterday (2026-05-10)" in log
    assert figures["answer_in_context_flushed"] >= figures["answer_in_context_raw"]
    assert figures["observation_recall"] >= 0.6
    assert conv["memory_md"]["speaker_prefixes"] == 0


@pytest.mark.slow
def test_the_bench_runs_the_model_when_one_is_given(
    tiny_data: Path, tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    entries = {
        "entries": [
            {"text": "Ines adopted a greyhound named Pixel.", "category": "fact", "importance": 2}
        ]
    }
    llm_server.reply_json(entries)
    llm_server.reply_json(
        {
            "entries": [
                {
                    "text": "Tomas plans a sailing trip to Sweden in August.",
                    "category": "commitment",
                }
            ]
        }
    )
    llm_server.reply_json({"sections": [], "archived": [], "merged": []})
    out = tmp_path / "figures.json"
    assert (
        ec.main(
            [
                "--data",
                str(tiny_data),
                "--conversations",
                "0",
                "--json-out",
                str(out),
                "--llm-url",
                llm_server.base_url,
                "--llm-model",
                "scripted-model",
            ]
        )
        == 0
    )
    figures = json.loads(out.read_text())
    conv = figures["per_conversation"]["conv-0"]
    assert figures["mode"] == "llm scripted-model"
    assert conv["flush"]["modes"] == {"llm": 2}
    assert conv["dream"]["mode"] == "llm"
    assert len(llm_server.requests) == 3
