"""The model door: every call to a model goes out through `door.llm`, the only module that
imports litellm (through `door.boot`), with what it sends, caches, counts and meters.
Imports nothing above it but the engine's top (config, errors, events, catalog, clock).

Frontends never import this wing: they use the names `engine` exports.
"""
