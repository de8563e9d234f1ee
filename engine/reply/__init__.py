"""Reading a model's reply: tags, markdown labels, JSON and every drift real models make,
into one turn; what is marked private stays private; cues matched to the cast. Pure.

Frontends never import this wing: they use the names `engine` exports.
"""
