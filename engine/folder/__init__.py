"""The scene folder on disk and its vocabulary: the store (the one writer of a scene folder),
the files a writer edits (souls, whispers, settings, the transcript and stage blocks) and what
they mean. Imports only the door and the top.

Frontends never import this wing: they use the names `engine` exports.
"""
