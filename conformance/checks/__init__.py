"""Pure checks: decoded data in, a :class:`CheckResult` (measured, limit, margin) out.

No I/O and no pytest in here, so every check is unit-testable on plain arrays.
"""

from conformance.checks.result import CheckResult

__all__ = ["CheckResult"]
