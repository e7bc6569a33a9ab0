"""Request shapes real clients send, built from the corpus, and the answers alone each of their
rows is judged against (by ``checks.batch.rows_answered``).

One relation holds for every correct server, whatever the shape: row i of a request is input
i's vector as the server answers it alone, at index i. Judging against the server's own singles
keeps a tokenizer or pooling fault out of it (that is reference.*'s); what is left is the
company a row keeps. A server that cleanly refuses an input alone (past its context) may refuse
any request holding it.

A shape is a few integers (kind, size, variant, seed) that pick its inputs from the pool, so
Hypothesis shrinks it toward fewer inputs and the same seed draws the same requests again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from hypothesis import strategies as st

from conformance.checks.status import is_refusal
from conformance.client import Exchange
from conformance.corpus import Case
from conformance.references import reference_cases
from conformance.wire import Matrix

# The documented limits: OpenAI's 2,048 inputs a request, and a total of tokens well past the
# step of a few thousand tokens engines split a request into (vLLM's max_num_batched_tokens).
MOST_INPUTS = 2048
MANY_TOKENS = 32_000
# Texts of the same words in other orders: the same token count under any tokenizer that
# reads a word the same wherever it stands (WordPiece, SentencePiece; BPE but for the first).
WORDS = ("river", "stone", "cloud", "garden", "window", "silver")
MORE_WORDS = ("morning", "letter", "yellow", "basket", "forest", "candle")
EQUAL_WORDS = {6: WORDS, 12: WORDS + MORE_WORDS}
EQUAL_TEXTS = 6  # permutations of each
POSITIONS = ("first", "middle", "last")  # where an over-long input stands in its request
LONG_TEXTS = 16  # distinct texts near the context, for the requests of many tokens
BURST_TEXTS = 12  # short texts bursts draw from, so that requests in flight share some
# Tokens of passages near the context one request shape holds at most: 64 passages at
# all-MiniLM-L6-v2's 256 tokens, 8 at nomic-embed-text's 2,048, so that a shape costs a server
# about the same whatever its model's context (past the step engines split a request into).
PASSAGE_TOKENS = 64 * 256


@dataclass(frozen=True)
class Input:
    id: str  # for failure messages: a corpus case id, or what the text was made of
    text: str


def _prose_words() -> list[str]:
    return " ".join(c.text for c in reference_cases() if "english" in c.tags).split()


def _word_inputs(count: int) -> list[Input]:
    """Distinct words of the English corpus: a few tokens each, so that thousands of them
    make a cheap request."""
    seen: dict[str, None] = {}
    for word in _prose_words():
        word = word.strip(".,;:!?\"'()").lower()
        if word.isalpha() and len(word) >= 4:
            seen.setdefault(word, None)
    return [Input(f"word:{w}", w) for w in list(seen)[:count]]


def _long_inputs(count: int, words: int) -> list[Input]:
    """``count`` distinct passages of ``words`` words of English corpus prose (a word of
    prose is one or two tokens), each starting elsewhere in it."""
    prose = _prose_words()
    step = max(1, (len(prose) - words) // count)
    wrapped = prose * 2  # a corpus shorter than a passage still gives whole ones
    texts = [" ".join(wrapped[k * step : k * step + words]) for k in range(count)]
    return [Input(f"long-{k:02d}[{words} words]", text) for k, text in enumerate(texts)]


def _equal_inputs(length: int) -> list[Input]:
    rng = np.random.default_rng(length)
    orders = [list(EQUAL_WORDS[length])]
    while len(orders) < EQUAL_TEXTS:
        order = list(rng.permutation(EQUAL_WORDS[length]))
        if order not in orders:
            orders.append(order)
    return [Input(f"equal{length}-{k}", " ".join(order)) for k, order in enumerate(orders)]


@dataclass(frozen=True)
class Pool:
    """The inputs shapes are made of, fixed by the corpus and the model's context. Most are
    inputs other tests send alone too (batch.large's, the request of 2,048 inputs'), so that a
    full run asks few answers alone for the shapes' sake."""

    context: int | None  # tokens an input must fit to be owed an answer; None: not stated
    sentences: tuple[Case, ...]  # batch.large's short corpus inputs

    @cached_property
    def words(self) -> list[Input]:
        return _word_inputs(64)

    @cached_property
    def short(self) -> list[Input]:
        """Short corpus sentences of every script and kind."""
        cases = self.sentences[:: max(1, len(self.sentences) // 32)][:32]
        return [Input(c.id, c.text) for c in cases]

    @cached_property
    def equal(self) -> dict[int, list[Input]]:
        return {length: _equal_inputs(length) for length in EQUAL_WORDS}

    @cached_property
    def over(self) -> list[Input]:
        """Corpus inputs past any context the suite knows (300 and 600 words)."""
        wanted = ("ctx-past-300", "ctx-past-600")
        return [Input(c.id, c.text) for c in reference_cases() if c.id in wanted]

    @cached_property
    def long(self) -> list[Input]:
        """Passages near the context: half as many words as it has tokens (256 words when it
        is not stated: within the 512 tokens most encoders read)."""
        words = self.context // 2 if self.context else 256
        return _long_inputs(LONG_TEXTS, words)

    @property
    def most_passages(self) -> int:
        """How many inputs a request of passages near the context holds at most."""
        return max(1, PASSAGE_TOKENS // self.context) if self.context else SIZES["many-tokens"][1]


@dataclass(frozen=True)
class Shape:
    """One request: its kind, how many inputs, a variant of the kind and the seed that orders
    them. ``inputs`` picks them from a pool."""

    kind: str  # equal, over-long, duplicates, mixed, many-tokens
    size: int
    variant: int = 0
    seed: int = 0

    def inputs(self, pool: Pool) -> list[Input]:
        rng = np.random.default_rng(self.seed)
        pick = _PICKERS[self.kind]
        return pick(self, pool, rng)

    def describe(self, inputs: Sequence[Input]) -> str:
        distinct = len({i.text for i in inputs})
        return f"{self!r}: {len(inputs)} inputs ({distinct} distinct)"


def _equal(shape: Shape, pool: Pool, rng: np.random.Generator) -> list[Input]:
    group = pool.equal[sorted(EQUAL_WORDS)[shape.variant % len(EQUAL_WORDS)]]
    return [group[i] for i in rng.permutation(len(group))[: max(2, min(shape.size, len(group)))]]


def _over_long(shape: Shape, pool: Pool, rng: np.random.Generator) -> list[Input]:
    size = max(2, shape.size)
    others = [pool.short[i] for i in rng.integers(0, len(pool.short), size - 1)]
    at = {"first": 0, "middle": size // 2, "last": size - 1}[POSITIONS[shape.variant % 3]]
    return [*others[:at], pool.over[shape.seed % len(pool.over)], *others[at:]]


def _duplicates(shape: Shape, pool: Pool, rng: np.random.Generator) -> list[Input]:
    distinct = pool.short[: 1 + shape.variant % 8]
    return [distinct[i] for i in rng.integers(0, len(distinct), max(2, shape.size))]


def _mixed(shape: Shape, pool: Pool, rng: np.random.Generator) -> list[Input]:
    """Words, sentences and equal-length texts: every length a short input has."""
    mixed = [*pool.words, *pool.short, *pool.equal[6]]
    return [mixed[i] for i in rng.integers(0, len(mixed), max(1, shape.size))]


def _many_tokens(shape: Shape, pool: Pool, rng: np.random.Generator) -> list[Input]:
    """Passages near the context with a few short inputs among them: tens of thousands of
    tokens at the largest sizes, past the step an engine splits a request into."""
    mixed = [*pool.long, *pool.short[:4]]
    size = min(max(1, shape.size), pool.most_passages)
    return [mixed[i] for i in rng.integers(0, len(mixed), size)]


_PICKERS: dict[str, Callable[[Shape, Pool, np.random.Generator], list[Input]]] = {
    "equal": _equal,
    "over-long": _over_long,
    "duplicates": _duplicates,
    "mixed": _mixed,
    "many-tokens": _many_tokens,
}
SIZES = {  # the sizes each kind is drawn at: up to OpenAI's 2,048 inputs where it is cheap
    "equal": (2, EQUAL_TEXTS),
    "over-long": (2, 40),
    "duplicates": (2, 64),
    "mixed": (1, MOST_INPUTS),
    "many-tokens": (1, 64),
}
# The fixed shapes, run before any generated one whatever the budget: every kind of company a
# row can keep, at each position.
FIXED = (
    Shape("equal", EQUAL_TEXTS, 0, 0),
    Shape("equal", EQUAL_TEXTS, 1, 1),
    *(Shape("over-long", 9, variant, variant) for variant in range(len(POSITIONS))),
    Shape("duplicates", 24, 3, 0),
    Shape("mixed", 40, 0, 0),
)


@dataclass(frozen=True)
class Burst:
    """Requests sent at once: ``requests`` of 1 to 8 inputs drawn from a few short texts, so
    that some texts are in flight in two requests at different positions."""

    requests: int
    seed: int = 0

    def inputs(self, pool: Pool) -> list[list[Input]]:
        rng = np.random.default_rng(self.seed)
        texts = pool.short[:BURST_TEXTS]
        return [
            [texts[i] for i in rng.integers(0, len(texts), int(rng.integers(1, 9)))]
            for _ in range(max(2, self.requests))
        ]


@dataclass(frozen=True)
class Staircase:
    """The fixed burst: request r holds r other texts and then the text all of them share, so
    that one text is in flight at every position from 0 to ``requests`` - 1 at once."""

    requests: int = 8

    def inputs(self, pool: Pool) -> list[list[Input]]:
        shared, others = pool.short[0], pool.short[1:]
        return [[*others[r : 2 * r], shared] for r in range(self.requests)]


def shapes() -> st.SearchStrategy[Shape]:
    """Any kind, at any of its sizes: Hypothesis shrinks a failing one toward fewer inputs."""
    return st.one_of(
        [
            st.builds(
                Shape,
                st.just(kind),
                st.integers(*SIZES[kind]),
                st.integers(0, 7),
                st.integers(0, 2**16),
            )
            for kind in SIZES
        ]
    )


def bursts() -> st.SearchStrategy[Burst]:
    return st.builds(Burst, st.integers(2, 8), st.integers(0, 2**16))


# The answers alone


Alone = Callable[[str], Exchange]  # the server's answer to one text sent alone


def alone_matrix(inputs: Sequence[Input], alone: Alone) -> tuple[Matrix | None, Exchange | None]:
    """Each input's vector sent alone, stacked, with a NaN row for an input refused alone
    (nothing is owed for it); else None and the answer alone that carries no vector."""
    vectors: list[np.ndarray | None] = []
    for item in inputs:
        exchange = alone(item.text)
        if is_refusal(exchange.status, large=True):
            vectors.append(None)
            continue
        batch = exchange.batch
        vector = batch.first_vector if batch is not None and exchange.status == 200 else None
        if vector is None:
            return None, exchange
        vectors.append(vector)
    widths = {len(v) for v in vectors if v is not None}
    if len(widths) > 1:  # dimension.* says which: no row can be compared
        return None, alone(next(i.text for i in inputs))
    width = widths.pop() if widths else 1
    return np.stack([np.full(width, np.nan) if v is None else v for v in vectors]), None


def send_together(
    send: Callable[[list[str]], Exchange], requests: Sequence[Sequence[Input]]
) -> list[Exchange]:
    """Every request sent at the same moment (released together by a barrier)."""
    start = threading.Barrier(len(requests))

    def one(inputs: Sequence[Input]) -> Exchange:
        start.wait()
        return send([i.text for i in inputs])

    with ThreadPoolExecutor(len(requests)) as pool:
        return list(pool.map(one, requests))
