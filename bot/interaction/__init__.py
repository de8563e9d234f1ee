"""Answering one interaction: who may act (the gate), what the running bot offers a command
(host), options, forms, uploads, private replies, and the one error edge.
"""
