"""The packaged conformance suite that ``pytest --endpoint URL`` collects.

Test modules only orchestrate: fetch answers (fixtures), run pure checks, ``expect`` them.
"""
