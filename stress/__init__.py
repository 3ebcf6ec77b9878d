"""The reliability suite: long runs behind ``make stress``, short runs in the pytest suite.

Each module has ``run(...) -> dict`` that does the work, checks what must hold (raising
``AssertionError`` on the first violation) and returns its figures; ``python -m stress`` runs them
at full size and prints one table. The pytest tests in ``bindings/python/tests`` call the same
``run`` functions with small sizes, so the fast and the long checks are one piece of code.
"""
