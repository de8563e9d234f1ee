"""The slash commands, grouped by what a writer does: directing, the cast, the scene's
context and backstory, the stage, the harvest, scenes and continuity. Each handler parses,
calls the engine, renders.
"""
