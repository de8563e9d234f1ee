"""What calls cost and whether the next may be made: the budgets, the scene's call log and the
daily ledger of an account.

Frontends never import this wing: they use the names `engine` exports.
"""
