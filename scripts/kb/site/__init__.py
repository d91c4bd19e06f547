"""The built-site check: every built file read once, then every link, anchor and script checked."""
