"""A scene as it plays in its Discord thread: the engine's events rendered in order, actors'
lines through webhook personas, thoughts to directors by DM (the only way private text
leaves the bot), ⭐ votes and reports. Imports only the bot's top helpers.
"""
