"""The control panel of a scene thread: its text as pure decisions, the message edited in
place, the persistent buttons and selects, and the message menus — one more way to call
the same commands.
"""
