"""Saved takes: their folders and numbers, the tree of replays, their rows, and reading a
take back (its prompts rebuilt, its secrets ledger). Reads only; a take never changes.

Frontends never import this wing: they use the names `engine` exports.
"""
