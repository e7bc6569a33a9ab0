"""Digest and signature of a results document: any edit, and a wrong key, are caught."""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from conformance.reporting.integrity import canonical_bytes, seal, verify

DOCUMENT = {"format": 1, "verdict": "PASS", "requirements": [{"id": "a.b", "measured": 1e-7}]}


def test_the_canonical_form_ignores_key_order_and_the_integrity_block() -> None:
    shuffled = {"requirements": DOCUMENT["requirements"], "verdict": "PASS", "format": 1}
    assert canonical_bytes(shuffled) == canonical_bytes(seal(DOCUMENT))


def test_an_unedited_document_verifies_and_an_edited_one_does_not() -> None:
    sealed = seal(DOCUMENT)
    assert verify(sealed).ok
    edited = {**sealed, "verdict": "FAIL"}
    outcome = verify(edited)
    assert not outcome.ok and "digest MISMATCH" in outcome.lines[0]


def test_a_signature_verifies_with_its_key_only() -> None:
    key, stranger = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    sealed = seal(DOCUMENT, key)
    assert verify(sealed, key.public_key()).ok
    assert not verify(sealed, stranger.public_key()).ok


def test_a_forged_signature_fails_even_with_the_key_it_carries() -> None:
    key, forger = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    sealed = seal(DOCUMENT, key)
    forged = seal({**DOCUMENT, "verdict": "FAIL"}, forger)  # re-sealed by someone else ...
    forged["integrity"]["signature"]["public_key"] = sealed["integrity"]["signature"]["public_key"]
    outcome = verify(forged)  # ... claiming the original signer's key
    assert not outcome.ok and "INVALID" in outcome.lines[-1]


def test_an_unsigned_document_fails_when_a_signer_is_expected() -> None:
    key = Ed25519PrivateKey.generate()
    assert verify(seal(DOCUMENT)).ok  # integrity only
    assert not verify(seal(DOCUMENT), key.public_key()).ok
    assert not verify(DOCUMENT).ok  # no integrity block at all
