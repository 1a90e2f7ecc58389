"""Measuring agents: exact and learned-best-response exploitability (with the caches they build on), the arena, matches, statistics and reports."""
