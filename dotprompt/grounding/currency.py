"""Currency codes as documents print them: `EUR` extracted from `4,50 €`, `GBP` from `£12`.

A fixed table of ISO 4217 codes and the signs that stand for them; a bare `$` counts as USD only
when no letter is glued before it (`A$`, `C$`, `R$` are other dollars and reals). A sign that several
currencies print (`$`, `¥`, `kr`) stands for a code only when the input names none of the others: `$`
on an invoice that says MXN (or pesos) is a peso sign, not USD.
"""

from __future__ import annotations

__all__ = ["SIGNS", "glued_to_letters", "rivals", "signs_for"]

SIGNS: dict[str, tuple[str, ...]] = {
    "EUR": ("€",), "USD": ("US$", "$"), "GBP": ("£",), "JPY": ("¥", "円"), "CNY": ("元", "¥"), "INR": ("₹", "Rs."),
    "CHF": ("SFr.", "Fr."), "AUD": ("A$", "AU$"), "CAD": ("C$", "CA$"), "NZD": ("NZ$",), "BRL": ("R$",),
    "MXN": ("MX$", "Mex$"), "PLN": ("zł",), "SEK": ("kr",), "NOK": ("kr",), "DKK": ("kr.", "kr"), "KRW": ("₩",),
    "RUB": ("₽",), "TRY": ("₺",), "ILS": ("₪",), "THB": ("฿",), "VND": ("₫",), "PHP": ("₱",), "UAH": ("₴",),
    "NGN": ("₦",), "ZAR": ("R",),
}


# Currencies that print a bare `$` too (beyond the table, whose signs for them are prefixed: `MX$`),
# and the words that name one in a document.
_DOLLARS = ("USD", "MXN", "CAD", "AUD", "NZD", "SGD", "HKD", "ARS", "CLP", "COP", "TWD", "BRL")
_NAMES: dict[str, tuple[str, ...]] = {"MXN": ("peso", "pesos"), "ARS": ("peso", "pesos"), "CLP": ("peso", "pesos"),
                                      "COP": ("peso", "pesos"), "CNY": ("rmb", "yuan", "renminbi"), "JPY": ("yen",),
                                      "BRL": ("reais", "real")}


def rivals(code: str, sign: str) -> tuple[str, ...]:
    """The words (lower case) naming another currency that prints `sign` too: if the input holds one,
    `sign` does not stand for `code` there."""
    sharing = {c for c, signs in SIGNS.items() if sign in signs}
    if sign == "$":
        sharing.update(_DOLLARS)
    others = sharing - {code.strip().upper()}
    return tuple(word for other in sorted(others) for word in (other.lower(), *_NAMES.get(other, ())))


def signs_for(value: str) -> tuple[str, ...]:
    """The printed signs of the currency code `value` (nothing when it is not one we know)."""
    return SIGNS.get(value.strip().upper(), ()) if len(value.strip()) == 3 else ()


def glued_to_letters(text: str, start: int) -> bool:
    """A sign that begins right after a letter is part of another sign (`A$` is not `$`)."""
    return start > 0 and text[start - 1].isalpha()
