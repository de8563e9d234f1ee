"""`check-model`: a short fixed rehearsal played on a model in memory, and what it found.

Frontends never import this wing: they use the names `engine` exports.
"""
