"""The TorchTPU Migration Handbook's knowledge base: load, validate, render, check.

Data flows one way: ``load`` -> ``validate`` -> ``render`` -> ``sitecheck``.
No module imports one that comes after it on that line.
"""
