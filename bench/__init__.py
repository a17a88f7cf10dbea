"""Benchmarks (run as scripts: ``python bench/engine.py``, ``python bench/server.py``).

A package only so that type checkers name ``bench/server.py`` ``bench.server``
instead of confusing it with the ``server`` package.
"""
