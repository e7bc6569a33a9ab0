"""One pytest run's machinery: the session that a run of the packaged suite keeps (settings,
the requirements it judges, the state canary, the header and the results document), and what
the suite's tests use to record a check's verdict (``expect``).

Imports nothing: the plugin's light path loads ``run.session_keys`` in every pytest run.
"""
