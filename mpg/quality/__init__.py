"""Data-quality expectation suites: declared in code, versioned, run inside `mpg run`.

Suite versions (append only; a suite's version changes whenever what it checks does):
- s1 (2026-11): every suite's first version.
"""
