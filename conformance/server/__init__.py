"""The bundled reference server: an OpenAI-compatible frontend and Python workers.

It is the suite's own system under test. It shares no encoding, decoding, pooling or
normalization code with the suite (``conformance.client``, ``conformance.checks``): one flawed
helper used on both sides would make the suite bless the server's bug.
"""
