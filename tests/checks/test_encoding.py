"""Checks of encoding_format=base64: honoured, and decoding to exactly 4*D bytes."""

from __future__ import annotations

from conformance.checks import encoding
from tests.checks.builders import b64, response

ROW = [0.6, 0.8, 0.0, 0.0]
DIM = len(ROW)


# base64.honoured


def test_base64_honoured_passes_on_strings() -> None:
    result = encoding.check_base64_honoured(response(b64(ROW), b64(ROW)))
    assert result.passed
    assert result.measured == 0
    assert result.margin == 0.0
    assert result.index is None


def test_base64_honoured_fails_on_a_float_list() -> None:
    result = encoding.check_base64_honoured(response(b64(ROW), ROW, ROW))
    assert not result.passed
    assert result.measured == 2
    assert result.margin == -2.0
    assert result.index == 1
    assert "embedding is a JSON array" in result.detail


def test_base64_honoured_counts_broken_base64_strings_as_honoured() -> None:
    # Broken strings are base64.decodes' business, not this check's.
    assert encoding.check_base64_honoured(response("not*base64")).passed


# base64.decodes


def test_base64_decodes_passes_on_float32_payloads() -> None:
    result = encoding.check_base64_decodes(response(b64(ROW), b64(ROW)), DIM)
    assert result.passed
    assert result.measured == 0
    assert result.margin == 0.0
    assert result.index is None


def test_base64_decodes_fails_on_a_float64_payload() -> None:
    batch = response(b64(ROW), b64(ROW, "<f8"))
    assert batch.items[1].base64_bytes == 8 * DIM
    result = encoding.check_base64_decodes(batch, DIM)
    assert not result.passed
    assert result.measured == 1
    assert result.margin == -1.0
    assert result.index == 1
    assert f"{8 * DIM} bytes, expected {4 * DIM}" in result.detail


def test_base64_decodes_fails_on_a_float16_payload() -> None:
    result = encoding.check_base64_decodes(response(b64(ROW, "<f2")), DIM)
    assert not result.passed
    assert result.index == 0
    assert f"{2 * DIM} bytes" in result.detail


def test_base64_decodes_fails_on_invalid_base64() -> None:
    result = encoding.check_base64_decodes(response(b64(ROW), b64(ROW), "AAAA!AAA"), DIM)
    assert not result.passed
    assert result.index == 2
    assert "not valid base64" in result.detail


def test_base64_decodes_fails_on_stripped_padding() -> None:
    stripped = b64(ROW[:2]).rstrip("=")
    assert len(stripped) % 4
    result = encoding.check_base64_decodes(response(stripped), 2)
    assert not result.passed
    assert result.index == 0


def test_base64_decodes_fails_on_a_float_list() -> None:
    result = encoding.check_base64_decodes(response(ROW), DIM)
    assert not result.passed
    assert result.index == 0
