"""One turn: who speaks next (casting), what each role is shown (prompts, the walls between
roles), and the performance that calls the door and reads the reply.

Frontends never import this wing: they use the names `engine` exports.
"""
