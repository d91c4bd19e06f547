"""Rules on the Markdown pages: front matter, names held to the wheel, recommended calls, tags, text said once."""
