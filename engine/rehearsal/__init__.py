"""The rehearsal: `Rehearsal`, composed of the parts it hands each command group (the scene
access, the run slot and loop, spending, takes, souls, cast, stage, notes, harvest).

Frontends never import this wing: they use the names `engine` exports.
"""
