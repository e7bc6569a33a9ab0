"""The verdict rules: from check records to per-requirement verdicts, and what a run's verdict
makes of them (known failures, declared capabilities, the baseline gate, certification).

Below the renderers and the session: nothing here imports ``reporting``, ``options``,
``session``, ``suite``, ``references`` or ``client``.
"""
