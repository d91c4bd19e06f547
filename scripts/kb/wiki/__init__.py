"""The team-wiki features: the review queue, edit links and stable URLs."""
