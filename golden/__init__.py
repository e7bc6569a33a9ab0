"""Bundled reference vectors: ``MODEL/SOURCE/{manifest.json,vectors.npy}`` per model and source.

Installed as the data package ``conformance.golden`` (see ``[tool.setuptools.package-dir]`` in
pyproject.toml); read with ``importlib.resources.files("conformance.golden")``.
"""
