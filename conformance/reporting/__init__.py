"""Renderers and writers: a run's verdicts as results.json, the terminal summary, HTML,
markdown, a badge, JUnit XML, and runs compared. The verdict rules live in ``verdicts``."""
