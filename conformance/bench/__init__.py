"""Benchmarks: latency of the reference server, validated answers only."""
