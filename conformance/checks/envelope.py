"""The ``envelope.*`` requirements: the response shape every OpenAI-compatible client parses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.checks.result import CheckResult, equals, no_offenders
from conformance.checks.vectors import check_item_count
from conformance.wire import EmbeddingBatch, Item


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def object_list(batch: EmbeddingBatch) -> CheckResult:
    """Top-level ``object`` is "list". Catches responses shaped by another API."""
    return equals(batch.object, "list", "top-level 'object' field")


def one_item_per_input(batch: EmbeddingBatch, n_inputs: int) -> CheckResult:
    """One ``data`` item per input. Catches dropped inputs and one item per token."""
    return check_item_count(batch, n_inputs)


def _items_offending(
    batch: EmbeddingBatch,
    offends: Callable[[Item], bool],
    describe: Callable[[Item], str],
    what: str,
) -> CheckResult:
    """Pass when no item offends; the first offender is described for the message."""
    offenders = [i for i, item in enumerate(batch.items) if offends(item)]
    example = describe(batch.items[offenders[0]]) if offenders else ""
    return no_offenders(offenders, len(batch.items), what, example)


def item_shape(batch: EmbeddingBatch) -> CheckResult:
    """Each item has ``object: "embedding"`` and an integer ``index``."""
    return _items_offending(
        batch,
        lambda item: item.object != "embedding" or not _is_int(item.index),
        lambda item: f"object={item.object!r}, index={item.index!r}",
        "items malformed",
    )


def index_order(batch: EmbeddingBatch) -> CheckResult:
    """Item i carries ``index`` i, so positions and indices agree with the input order."""
    indices = [item.index for item in batch.items]
    offenders = [i for i, index in enumerate(indices) if index != i]
    example = f"indices {indices[:12]}" if offenders else ""
    return no_offenders(offenders, len(indices), "items with index != position", example)


def model_string(batch: EmbeddingBatch) -> CheckResult:
    """``model`` is a non-empty string."""
    ok = isinstance(batch.model, str) and bool(batch.model)
    return CheckResult(ok, repr(batch.model), "a non-empty string", None, "response 'model' field")


def embedding_number_array(batch: EmbeddingBatch) -> CheckResult:
    """With float encoding each embedding is one flat array of JSON numbers.

    Catches numbers sent as strings and the per-token matrix (an array of arrays)."""
    return _items_offending(
        batch,
        lambda item: item.encoding != "float",
        lambda item: f"{item.encoding}: {item.problem}",
        "embeddings not a flat number array",
    )


def usage(batch: EmbeddingBatch) -> CheckResult:
    """``usage`` has integer prompt_tokens >= 1 and total_tokens >= prompt_tokens."""
    counts = batch.usage
    if counts is None:
        return CheckResult(
            False, "missing", "an object", None, "'usage' is absent or not an object"
        )
    prompt, total = counts.prompt_tokens, counts.total_tokens
    ok = _is_int(prompt) and _is_int(total) and prompt >= 1 and total >= prompt
    return CheckResult(
        ok,
        f"prompt_tokens={prompt!r}, total_tokens={total!r}",
        "integers, 1 <= prompt_tokens <= total_tokens",
        None,
        "'usage' counts",
    )
