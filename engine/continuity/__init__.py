"""Across scenes: the next scene started from a take, each actor carrying only what it
witnessed.

Frontends never import this wing: they use the names `engine` exports.
"""
