"""A writer's own screenplay file read as elements with their places in the file: Fountain and
Final Draft (FDX) readers, and the scene they hold as a Circus record (cast, turns, stage blocks,
who is on stage). Pure; imports only the folder wing and the top.
"""
