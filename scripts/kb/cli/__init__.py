"""The small commands of python -m kb (validate, check-site, review, check-wheel)."""
