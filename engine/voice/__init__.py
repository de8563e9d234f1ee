"""The table read: a take heard in voices — the script of who reads what, the speech engines
(eSpeak NG offline, litellm's speech API), the line cache, the mixing and the audio file.
May import the top and every wing up to harvest/.

Frontends never import this wing: they use the names `engine` exports.
"""
