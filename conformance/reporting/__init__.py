"""Turning test reports into per-requirement verdicts, and verdicts into summaries."""
