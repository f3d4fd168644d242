"""The deep mode's model time a question (search/deep.py): Gemma 3 270M run by llama.cpp,
loaded once, asked a set of everyday questions (none from the evaluation data), with the
generation settings that decide its cost: tokens the model may write, llama.cpp's threads.
Prints wall and CPU time a question (p50 / p95) and the words each setting gives, with the
load average of the machine before and after; writes bench/results/deep.json.

    python bench/deep.py [--tokens 20,12] [--threads 1,2] [--rounds 1]

Each question is asked once a setting (a kept question costs nothing: the figures are of
the model's own call, `Expander` bypassed). The settings run in turn, one model a setting.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

from _harness import write_results

QUESTIONS = [
    "What hobbies does Sam have?",
    "What activities does Ria enjoy on weekends?",
    "Which countries has Tom been to?",
    "What instruments does Lea play?",
    "What pets does Omar have?",
    "Which foods does Nina dislike?",
    "What sports does Ivan watch?",
    "What books has Mia read this year?",
    "Which cities did Jonas visit last summer?",
    "What games do Ada and Ben both like?",
    "What does Priya do to relax?",
    "What kind of music does Leo listen to?",
    "Where does Sara work?",
    "What courses is Ali taking?",
    "Which movies did Kim watch?",
    "What remedies does Eva use for a cold?",
    "What did Noah cook for dinner?",
    "What gifts did Zoe get for her birthday?",
    "What languages does Max speak?",
    "Which drinks does Ana order at cafes?",
]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def measure(tokens: int, threads: int, rounds: int) -> dict[str, Any]:
    """Load the model with `threads`, ask every question `rounds` times at `tokens`."""
    from vault_memory.search import deep

    deep.MOST_TOKENS = tokens  # read by the model's completion at each call
    started = time.perf_counter()
    complete = deep.load_model(deep.model_path(), threads)
    load_s = time.perf_counter() - started
    walls: list[float] = []
    cpus: list[float] = []
    words: dict[str, list[str]] = {}
    for _ in range(rounds):
        for question in QUESTIONS:
            cpu, wall = time.process_time(), time.perf_counter()
            reply = complete(deep.expansion_prompt(question))
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
            words[question] = deep.reply_words(reply, question)
    return {
        "tokens": tokens,
        "threads": threads,
        "load_s": round(load_s, 3),
        "wall_p50_s": round(statistics.median(walls), 3),
        "wall_p95_s": round(percentile(walls, 0.95), 3),
        "cpu_p50_s": round(statistics.median(cpus), 3),
        "cpu_p95_s": round(percentile(cpus, 0.95), 3),
        "words_mean": round(statistics.mean(len(w) for w in words.values()), 2),
        "words": words,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", default="20,12", help="tokens the model may write")
    parser.add_argument("--threads", default="1,2", help="llama.cpp threads")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    load_before = os.getloadavg()
    rows = []
    for threads in (int(t) for t in args.threads.split(",")):
        for tokens in (int(t) for t in args.tokens.split(",")):
            row = measure(tokens, threads, args.rounds)
            rows.append(row)
            print(
                f"tokens {tokens:3d} threads {threads}: wall p50 {row['wall_p50_s']:.2f} s "
                f"p95 {row['wall_p95_s']:.2f} s, CPU p50 {row['cpu_p50_s']:.2f} s "
                f"p95 {row['cpu_p95_s']:.2f} s, {row['words_mean']} words a question "
                f"(load {row['load_s']:.1f} s)"
            )
    load_after = os.getloadavg()
    print(f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f}")
    write_results(
        "deep",
        {"rows": rows, "load_before": load_before[0], "load_after": load_after[0]},
        extra_versions=("llama-cpp-python",),
    )


if __name__ == "__main__":
    main()
