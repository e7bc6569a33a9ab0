"""Pure checks: decoded data in, a :class:`CheckResult` (measured, limit, margin) out.

No I/O and no pytest in here, so every check is unit-testable on plain arrays. A check imports
:mod:`conformance.wire`, numpy and the standard library only (``tests/checks/test_purity.py``).
"""

from conformance.checks.result import CheckResult

__all__ = ["CheckResult"]
