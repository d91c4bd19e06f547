"""The released torch-tpu wheel (and the frameworks' wheels) read as zips: names, messages, facts."""
