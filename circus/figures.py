"""Money, tokens and budgets as the terminal writes them (the run's status line, `circus status`).

Imports only the terminal's words, never the engine: `circus status` prints these without
loading what a run needs to render its events.
"""

from __future__ import annotations

from circus.words import t


def format_tokens(n: int) -> str:
    return t("cli.tokens", n=n)


def format_cost(cost: float | None, known: bool = True) -> str:
    if cost is None:
        return t("cli.cost_unknown")
    return f"${cost:.4f}" + ("" if known else t("cli.some_prices_unknown"))


def format_budget(scope: str, unit: str, setting: str, limit: float, spent: float) -> str:
    """One budget for `circus status`: which one, what is spent and what is left."""
    amount = (lambda v: f"${v:.4f}") if unit == "usd" else (lambda v: format_tokens(int(v)))
    left = max(0.0, limit - spent)
    which = t("cli.budget.scene") if scope == "scene" else t("cli.budget.day")
    return t(
        "cli.budget",
        which=which,
        setting=setting,
        spent=amount(spent),
        limit=amount(limit),
        left=amount(left),
    )
