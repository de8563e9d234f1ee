"""Models that run in this process: the embedded SmolLM2 and the scripted stand-in the tests
use. litellm reaches them by name (door.boot); nothing in the engine imports them.

Frontends never import this wing: they use the names `engine` exports.
"""
