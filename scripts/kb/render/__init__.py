"""Shortcodes to Markdown and the HTML touches after it: tables, charts, diagrams, the error index,
print and search index.
"""
