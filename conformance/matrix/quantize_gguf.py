"""Quantize a GGUF file with llama.cpp's own quantizer, as llama-cpp-python ships it.

Run by path with the Python of an environment that has llama-cpp-python (the matrix's
llama-cpp-python environment, scripts/measure_tiers.py): it imports nothing of this project.

    python quantize_gguf.py SOURCE.gguf OUT.gguf q8_0|q4_k_m|bf16|f16
"""

from __future__ import annotations

import sys
from pathlib import Path

# Names as llama.cpp spells them (lower case, as --precision takes them) -> llama_ftype
FTYPES = {
    "f16": "LLAMA_FTYPE_MOSTLY_F16",
    "bf16": "LLAMA_FTYPE_MOSTLY_BF16",
    "q8_0": "LLAMA_FTYPE_MOSTLY_Q8_0",
    "q4_k_m": "LLAMA_FTYPE_MOSTLY_Q4_K_M",
}


def quantize(source: Path, out: Path, kind: str) -> None:
    """Writes ``out`` whole or not at all: llama.cpp writes to a temporary name first."""
    import llama_cpp  # type: ignore[import-not-found]  # the peer's environment, not ours

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, FTYPES[kind])
    partial = out.with_name(out.name + ".partial")
    status = llama_cpp.llama_model_quantize(str(source).encode(), str(partial).encode(), params)
    if status != 0:
        partial.unlink(missing_ok=True)
        raise SystemExit(f"llama_model_quantize({source} -> {kind}) returned {status}")
    partial.replace(out)


def main(argv: list[str]) -> None:
    if len(argv) != 3 or argv[2] not in FTYPES:
        raise SystemExit(f"usage: quantize_gguf.py SOURCE.gguf OUT.gguf {'|'.join(FTYPES)}")
    quantize(Path(argv[0]), Path(argv[1]), argv[2])


if __name__ == "__main__":
    main(sys.argv[1:])
