"""What must never be promoted into MEMORY.md: text that reads as an instruction to a model
(files/injection.py), shell commands, code, metadata lines, bare URLs, fragments and
half-sentences, very short lines.

Similar tools promoted exactly these (a `git push` line, `and then the`, a token-count log
line), so a dream rejects them before any scoring, and an LLM's proposed entries go through the
same check. `junk_reason(text)` says why a text is junk, or returns None.
"""

from __future__ import annotations

import re

from ..files import TAG_NAME, judge_instruction

MIN_WORDS = 4
MIN_LETTERS = 15

_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_TAG = re.compile(rf"(?<![\w/&#])#{TAG_NAME}")
_URL = re.compile(r"^(?:<)?(?:https?|ftp)://\S+?(?:>)?$|^www\.\S+$", re.I)
_MD_LINK = re.compile(r"^\[([^\]]*)\]\((\S+)\)$")
_KEY_VALUE = re.compile(r"^[A-Za-z_][\w.\-]*=\S*$")
_HEADER_LINE = re.compile(r"^([A-Za-z_][\w \-]{0,24}):\s*(\S.*)?$")
_METADATA_KEYS = {
    "id",
    "uuid",
    "session",
    "session id",
    "session_id",
    "user",
    "user_id",
    "model",
    "tokens",
    "tokens_in",
    "tokens_out",
    "latency",
    "latency_ms",
    "timestamp",
    "time",
    "date",
    "created",
    "created_at",
    "updated",
    "updated_at",
    "exported_at",
    "source",
    "status",
    "finish_reason",
    "request_id",
    "trace_id",
    "run_id",
    "version",
    "commit",
    "sha",
}
_TIMESTAMPISH = re.compile(r"^[\d\s:.,/T+\-Z]+$")
_FRAGMENT_WORDS = {"todo", "tbd", "wip", "fixme", "xxx", "n/a", "na", "tba", "etc", "misc", "..."}
_DANGLING = {
    "the",
    "a",
    "an",
    "and",
    "or",
    "but",
    "to",
    "of",
    "in",
    "on",
    "for",
    "with",
    "at",
    "by",
    "from",
    "then",
    "that",
    "which",
    "because",
    "so",
    "if",
    "is",
    "are",
    "was",
    "were",
    "as",
    "into",
    "than",
    "when",
    "while",
    "my",
    "our",
    "their",
    "his",
    "her",
    "its",
    "this",
    "these",
}
_SHELL_COMMANDS = {
    "git",
    "pip",
    "pip3",
    "pipx",
    "uv",
    "uvx",
    "poetry",
    "npm",
    "npx",
    "yarn",
    "pnpm",
    "docker",
    "docker-compose",
    "podman",
    "kubectl",
    "helm",
    "k9s",
    "cd",
    "ls",
    "ll",
    "rm",
    "mv",
    "cp",
    "mkdir",
    "rmdir",
    "touch",
    "chmod",
    "chown",
    "ln",
    "sudo",
    "su",
    "curl",
    "wget",
    "ssh",
    "scp",
    "rsync",
    "python",
    "python3",
    "node",
    "deno",
    "bun",
    "make",
    "cmake",
    "cargo",
    "go",
    "rustc",
    "gcc",
    "brew",
    "apt",
    "apt-get",
    "dnf",
    "yum",
    "pacman",
    "systemctl",
    "journalctl",
    "psql",
    "mysql",
    "pg_dump",
    "pg_restore",
    "pgloader",
    "redis-cli",
    "terraform",
    "aws",
    "gcloud",
    "az",
    "export",
    "unset",
    "echo",
    "printf",
    "cat",
    "less",
    "head",
    "tail",
    "grep",
    "rg",
    "sed",
    "awk",
    "find",
    "xargs",
    "tar",
    "zip",
    "unzip",
    "gzip",
    "kill",
    "pkill",
    "killall",
    "ps",
    "top",
    "htop",
    "df",
    "du",
    "source",
    "bash",
    "sh",
    "zsh",
    "fish",
    "env",
    "pytest",
    "ruff",
    "mypy",
    "black",
    "tox",
    "nox",
    "vault",
    "gh",
    "jq",
    "yq",
    "openssl",
    "crontab",
    "tmux",
    "screen",
    "watch",
    "time",
    "nohup",
    "nc",
    "ping",
    "dig",
    "nslookup",
}
_SHELL_OPERATORS = re.compile(r"(?:^|\s)(?:&&|\|\||\||;|>>?|2>&1|<)(?:\s|$)")
_FLAG = re.compile(r"(?:^|\s)--?[A-Za-z][\w\-]*(?:=\S+)?(?=\s|$)")
_CODE_START = re.compile(
    r"^(?:def|class|import|from\s+\S+\s+import|return|const|let|var|function|fn|pub\s+fn|"
    r"public|private|package|#include|#!|SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\S+\s+SET|"
    r"DELETE\s+FROM|CREATE\s+(?:TABLE|INDEX)|ALTER\s+TABLE|DROP\s+TABLE)\b",
    re.I,
)
_CODE_END = re.compile(r"[{}]\s*$|\);\s*$|^\s*[})\]]")
_CODE_CHARS = set("{}()[];=<>$\\|`")


def clean(text: str) -> str:
    """The text a reader sees: bullets, HTML comments and #tags removed, one line."""
    lines = [_BULLET.sub("", line, count=1) for line in text.strip().split("\n")]
    return " ".join(_TAG.sub(" ", _COMMENT.sub(" ", " ".join(lines))).split())


def junk_reason(text: str) -> str | None:
    """Why `text` (one entry, possibly several lines) must not go into MEMORY.md, or None."""
    raw = text.strip()
    verdict = judge_instruction(raw)
    if verdict.flagged:  # a stored instruction must not become a standing one
        return "reads as an instruction to a model (" + ", ".join(verdict.reasons) + ")"
    if "```" in raw or "~~~" in raw:
        return "code block"
    plain = clean(raw)
    if not plain:
        return "empty"
    words = plain.split()
    if plain.lower().strip(" .!:") in _FRAGMENT_WORDS:
        return "placeholder, not a fact"
    if _is_url_only(plain):
        return "bare URL"
    if _is_metadata(plain):
        return "metadata line"
    if _is_shell(plain):
        return "shell command"
    if _is_code(plain):
        return "code"
    fragment = _fragment(plain, words)
    if fragment:
        return fragment
    letters = sum(ch.isalpha() for ch in plain)
    if len(words) < MIN_WORDS or letters < MIN_LETTERS:
        return "too short to stand on its own"
    return None


def is_junk(text: str) -> bool:
    return junk_reason(text) is not None


def _is_url_only(plain: str) -> bool:
    if _URL.match(plain):
        return True
    link = _MD_LINK.match(plain)
    return bool(link and (not link[1].strip() or _URL.match(link[1].strip())))


def _is_metadata(plain: str) -> bool:
    tokens = plain.replace(",", " ").split()
    pairs = sum(bool(_KEY_VALUE.match(t)) for t in tokens)
    if pairs >= 2 and pairs * 2 >= len(tokens):
        return True
    if _TIMESTAMPISH.match(plain):
        return True
    header = _HEADER_LINE.match(plain)
    if header and header[1].strip().lower() in _METADATA_KEYS:
        value = (header[2] or "").split()
        return len(value) <= 3
    return False


def _is_shell(plain: str) -> bool:
    text = plain.strip()
    if text.startswith(("$ ", "❯ ")):
        return True
    if text.startswith("`") and text.endswith("`") and text.count("`") == 2:
        text = text.strip("`").strip()  # a line that is only inline code: judge what is inside
        if text.split() and text.split()[0] in _SHELL_COMMANDS:
            return True
    first = text.split()[0] if text.split() else ""
    if first not in _SHELL_COMMANDS:
        return False
    rest = text[len(first) :]
    # `git push --force origin main`, `ls -la | grep x`, `cd ~/src && make` look like commands;
    # "make sure the …" or "watch the queue" are prose (no flags, operators or paths).
    return bool(
        _FLAG.search(rest)
        or _SHELL_OPERATORS.search(rest)
        or re.search(r"(?:^|\s)(?:~|\.{1,2})?/\S", rest)
        or (len(text.split()) <= 4 and not text.endswith("."))
    )


def _is_code(plain: str) -> bool:
    if _CODE_START.match(plain) and not plain.endswith("."):
        return True
    if _CODE_END.search(plain) and not re.search(r"[A-Za-z]{3,}[.!?]\s", plain):
        return True
    if plain.startswith("`") and plain.endswith("`") and plain.count("`") == 2:
        return True  # a line that is nothing but inline code
    symbols = sum(ch in _CODE_CHARS for ch in plain)
    letters = sum(ch.isalpha() for ch in plain)
    return symbols >= 6 and symbols > letters * 0.25


def _fragment(plain: str, words: list[str]) -> str | None:
    if plain.endswith((":", ";", ",", "-", "–", "—", "(", "/", "&", "+")):
        return "fragment: ends mid-sentence"
    if plain.endswith(("...", "…")) and len(words) < 12:
        return "fragment: trails off"
    last = words[-1].lower().strip("\"'“”‘’*_") if words else ""
    if last in _DANGLING:
        return "fragment: ends on a dangling word"
    for opening, closing in ("()", "[]", "{}"):
        if plain.count(opening) != plain.count(closing):
            return "fragment: unbalanced brackets"
    if plain.count("`") % 2:
        return "fragment: unbalanced backticks"
    return None
