"""The base every other part stands on: problems with a location, escaping, the strict YAML reader, the
KB's schema, loading and cross-table validation.
"""
