"""The bundled reference server: an OpenAI-compatible frontend and Python workers.

It is the suite's own system under test. It shares no encoding, decoding, pooling or
normalization code with the suite, and imports none of its modules (``checks``, ``client``,
``references``, ``expect``, ``suite``, ...; tests/test_layers.py): one flawed helper used on
both sides would make the suite bless the server's bug. It reads a model's pooling and
normalization itself (``model_folder``).
"""
