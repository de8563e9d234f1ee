"""What a writer takes out of a take: the report, the diff of two takes, the line bin
(picks) and the exports (Fountain, FDX, a readable script, a storyboard). Pure builders.

Frontends never import this wing: they use the names `engine` exports.
"""
