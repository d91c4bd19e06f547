"""The build as library calls for the MkDocs hook: the project pipeline, caches under serve, export, publish."""
