"""The compatibility matrix: the suite run against real servers, one column each.

``peers.toml`` says, as data, how each server is installed (its own virtual environment under a
cache folder, never the project's), started offline on 127.0.0.1 serving all-MiniLM-L6-v2 or a
fetched model (``weights``), and judged ready; ``build`` installs what is missing, runs each peer
one after another, the suite against it with ``--report-dir``, stops it whatever happens, and
``publish`` renders the matrix.
"""
