"""Currency codes as documents print them: `EUR` extracted from `4,50 €`, `GBP` from `£12`.

A fixed table of ISO 4217 codes and the signs that stand for them; a bare `$` counts as USD only
when no letter is glued before it (`A$`, `C$`, `R$` are other dollars and reals).
"""

from __future__ import annotations

__all__ = ["SIGNS", "glued_to_letters", "signs_for"]

SIGNS: dict[str, tuple[str, ...]] = {
    "EUR": ("€",), "USD": ("US$", "$"), "GBP": ("£",), "JPY": ("¥", "円"), "CNY": ("元", "¥"), "INR": ("₹", "Rs."),
    "CHF": ("SFr.", "Fr."), "AUD": ("A$", "AU$"), "CAD": ("C$", "CA$"), "NZD": ("NZ$",), "BRL": ("R$",),
    "MXN": ("MX$", "Mex$"), "PLN": ("zł",), "SEK": ("kr",), "NOK": ("kr",), "DKK": ("kr.", "kr"), "KRW": ("₩",),
    "RUB": ("₽",), "TRY": ("₺",), "ILS": ("₪",), "THB": ("฿",), "VND": ("₫",), "PHP": ("₱",), "UAH": ("₴",),
    "NGN": ("₦",), "ZAR": ("R",),
}


def signs_for(value: str) -> tuple[str, ...]:
    """The printed signs of the currency code `value` (nothing when it is not one we know)."""
    return SIGNS.get(value.strip().upper(), ()) if len(value.strip()) == 3 else ()


def glued_to_letters(text: str, start: int) -> bool:
    """A sign that begins right after a letter is part of another sign (`A$` is not `$`)."""
    return start > 0 and text[start - 1].isalpha()
