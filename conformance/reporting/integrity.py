"""A results document's digest and optional Ed25519 signature, and their verification.

The digest (sha256 over the canonical JSON of everything but ``integrity``) shows the document
was not edited since it was written; anyone can recompute it, so it proves nothing about who
wrote it. The signature adds that: only the holder of the private key can make one that the
public key accepts. The cryptography is the ``cryptography`` package's, not ours.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

KEY = "integrity"


def canonical_bytes(document: dict[str, Any]) -> bytes:
    """Sorted keys, no whitespace, ASCII escapes: the same bytes for the same content."""
    content = {key: value for key, value in document.items() if key != KEY}
    return json.dumps(content, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def digest(document: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_bytes(document)).hexdigest()


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """A PEM (PKCS#8) Ed25519 private key, e.g. from ``openssl genpkey -algorithm ed25519``."""
    key = _read_pem(
        path,
        lambda data: serialization.load_pem_private_key(data, password=None),
        "unencrypted PEM private key",
    )
    if not isinstance(key, Ed25519PrivateKey):
        raise _not_ed25519(path, key)
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    key = _read_pem(path, serialization.load_pem_public_key, "PEM public key")
    if not isinstance(key, Ed25519PublicKey):
        raise _not_ed25519(path, key)
    return key


def _read_pem(path: Path, load: Callable[[bytes], object], what: str) -> object:
    try:
        return load(path.read_bytes())
    except (OSError, ValueError, TypeError) as exc:
        raise ValueError(f"{path}: not a readable {what} ({exc})") from None


def _not_ed25519(path: Path, key: object) -> ValueError:
    return ValueError(f"{path}: not an Ed25519 key ({type(key).__name__})")


def _raw(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def seal(document: dict[str, Any], key: Ed25519PrivateKey | None = None) -> dict[str, Any]:
    """``document`` with its integrity block: the digest, and a signature over the digest's
    hex text when a key is given."""
    value = digest(document)
    block: dict[str, Any] = {"digest": {"algorithm": "sha256", "value": value}}
    if key is not None:
        block["signature"] = {
            "algorithm": "ed25519",
            "public_key": base64.b64encode(_raw(key.public_key())).decode("ascii"),
            "value": base64.b64encode(key.sign(value.encode("ascii"))).decode("ascii"),
        }
    return {**{k: v for k, v in document.items() if k != KEY}, KEY: block}


@dataclass(frozen=True)
class Verification:
    ok: bool
    lines: list[str]  # what was checked, and what failed


def verify(document: dict[str, Any], public_key: Ed25519PublicKey | None = None) -> Verification:
    """Recompute the digest; check the signature against ``public_key`` (the key the verifier
    trusts), else only against the key the document carries (proves it is self-consistent,
    not who signed it)."""
    block = document.get(KEY)
    if not isinstance(block, dict) or not isinstance(block.get("digest"), dict):
        return Verification(False, ["no integrity block: the document carries no digest"])
    stated, actual = block["digest"].get("value"), digest(document)
    if stated != actual:
        return Verification(
            False, [f"digest MISMATCH: the content was changed (stated {stated}, is {actual})"]
        )
    lines = [f"digest ok: sha256 {actual}"]
    signature = block.get("signature")
    if signature is None:
        if public_key is not None:
            return Verification(False, [*lines, "NOT SIGNED, but a public key was given"])
        return Verification(True, [*lines, "not signed: integrity only, not authorship"])
    carried = base64.b64decode(signature["public_key"])
    if public_key is not None and _raw(public_key) != carried:
        return Verification(False, [*lines, "signature made with ANOTHER KEY than the one given"])
    try:
        Ed25519PublicKey.from_public_bytes(carried).verify(
            base64.b64decode(signature["value"]), actual.encode("ascii")
        )
    except (InvalidSignature, ValueError):
        return Verification(False, [*lines, "signature INVALID"])
    whose = "the given public key" if public_key is not None else "the key it carries"
    lines.append(f"signature ok: Ed25519, by {whose} ({signature['public_key']})")
    if public_key is None:
        lines.append("give --public-key to check who signed it")
    return Verification(True, lines)
