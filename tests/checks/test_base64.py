"""Checks of encoding_format=base64: honoured, decoding to exactly 4*D bytes, and equal to the
float output."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.checks import base64
from tests.checks.builders import b64, response

ROW = [0.6, 0.8, 0.0, 0.0]
DIM = len(ROW)
FLOATS = [[0.1, -0.2, 0.3], [0.7, 0.0, -1.5]]  # not exactly representable in float32


# base64.honoured


def test_base64_honoured_passes_on_strings() -> None:
    result = base64.honoured(response(b64(ROW), b64(ROW)))
    assert result.passed
    assert result.measured == 0
    assert result.margin == 0.0
    assert result.index is None


def test_base64_honoured_fails_on_a_float_list() -> None:
    result = base64.honoured(response(b64(ROW), ROW, ROW))
    assert not result.passed
    assert result.measured == 2
    assert result.margin == -2.0
    assert result.index == 1
    assert "embedding is a JSON array" in result.detail


def test_base64_honoured_counts_broken_base64_strings_as_honoured() -> None:
    # Broken strings are base64.decodes' business, not this check's.
    assert base64.honoured(response("not*base64")).passed


# base64.decodes


def test_base64_decodes_passes_on_float32_payloads() -> None:
    result = base64.decodes(response(b64(ROW), b64(ROW)), DIM)
    assert result.passed
    assert result.measured == 0
    assert result.margin == 0.0
    assert result.index is None


def test_base64_decodes_fails_on_a_float64_payload() -> None:
    batch = response(b64(ROW), b64(ROW, "<f8"))
    assert batch.items[1].base64_bytes == 8 * DIM
    result = base64.decodes(batch, DIM)
    assert not result.passed
    assert result.measured == 1
    assert result.margin == -1.0
    assert result.index == 1
    assert f"{8 * DIM} bytes, expected {4 * DIM}" in result.detail


def test_base64_decodes_fails_on_a_float16_payload() -> None:
    result = base64.decodes(response(b64(ROW, "<f2")), DIM)
    assert not result.passed
    assert result.index == 0
    assert f"{2 * DIM} bytes" in result.detail


def test_base64_decodes_fails_on_invalid_base64() -> None:
    result = base64.decodes(response(b64(ROW), b64(ROW), "AAAA!AAA"), DIM)
    assert not result.passed
    assert result.index == 2
    assert "not valid base64" in result.detail


def test_base64_decodes_fails_on_stripped_padding() -> None:
    stripped = b64(ROW[:2]).rstrip("=")
    assert len(stripped) % 4
    result = base64.decodes(response(stripped), 2)
    assert not result.passed
    assert result.index == 0


def test_base64_decodes_fails_on_a_float_list() -> None:
    result = base64.decodes(response(ROW), DIM)
    assert not result.passed
    assert result.index == 0


# base64.float_parity: base64 vs float output


def test_float32_parity_passes_bit_identical_at_zero_tolerance() -> None:
    decoded = response(*[b64(row) for row in FLOATS]).matrix()
    floats = response(*FLOATS).matrix()
    result = base64.float_parity(decoded, floats, 0.0)
    assert result.passed
    assert result.measured == 0.0
    assert result.margin == 0.0
    assert result.limit == "<= 0"


def test_float32_parity_compares_json_floats_after_rounding_to_float32() -> None:
    floats = np.array(FLOATS)
    decoded = floats.astype(np.float32).astype(np.float64)
    assert np.abs(decoded - floats).max() > 0  # they differ before rounding
    assert base64.float_parity(decoded, floats, 0.0).passed


def test_float32_parity_fails_on_big_endian_base64() -> None:
    decoded = response(*[b64(row, ">f4") for row in FLOATS]).matrix()
    floats = response(*FLOATS).matrix()
    result = base64.float_parity(decoded, floats, 0.0)
    assert not result.passed
    assert isinstance(result.measured, float) and result.measured > 0.1
    assert result.margin is not None and result.margin < 0
    assert result.index in (0, 1)
    assert "base64 vs float output" in result.detail


def test_float32_parity_fails_when_one_row_differs() -> None:
    rows = [b64(FLOATS[0]), b64([0.7, 0.0, -1.25])]
    result = base64.float_parity(response(*rows).matrix(), response(*FLOATS).matrix(), 1e-4)
    assert not result.passed
    norm = float(np.linalg.norm(FLOATS[1]))  # above 1: measured in units of it (compare.py)
    assert result.measured == pytest.approx(0.25 / norm)
    assert result.margin == pytest.approx(1e-4 - 0.25 / norm)
    assert result.index == 1


def test_float32_parity_fails_on_a_float64_payload_of_twice_the_length() -> None:
    decoded = response(*[b64(row, "<f8") for row in FLOATS]).matrix()
    result = base64.float_parity(decoded, response(*FLOATS).matrix(), 1e-3)
    assert not result.passed
    assert result.measured == "shape (2, 6)"
    assert result.margin is None
