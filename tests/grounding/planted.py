"""A planted set for grounding as a gate: documents with values planted in them, and outputs whose
values are either copied from the document (each with the exact span it must be found at) or made up
so that only a careless matcher would find them (a near name, a truncated id, a number inside a longer
number, a dotted date read month-first, a currency sign another currency shares).

Written for this project from the classes of issue 31; every case is drawn from a seeded
`random.Random`, so a run is repeatable and another seed gives another set.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["CLASSES", "Case", "cases"]

SURNAMES = ("Kranich", "Brandt", "Oswald", "Meier", "Lindqvist", "Moreau", "Rossi", "Novak", "Haas", "Vogel",
            "Berger", "Keller", "Fuchs", "Arnold", "Lorenz", "Schade", "Winter", "Ziegler", "Huber", "Engel")
KINDS = ("Software", "Handels", "Logistik", "Bau", "Medien", "Technik", "Immobilien", "Consulting", "Druck", "Transport")
FORMS = ("GmbH", "AG", "KG", "S.L.", "S.A.", "Ltd", "SARL", "B.V.")
SPANISH = ("Grupo", "Comercial", "Industrias", "Distribuciones")
WORDS = ("Global", "Brisa", "Norte", "Solar", "Atlas", "Iberia", "Delta", "Costa", "Nova", "Sierra")
FILLER = ("Thank you for your business.", "Payment within 14 days.", "Page 1 of 2", "Customer no. 4711",
          "Please quote the invoice number.", "Bank transfer only.", "Delivery to the address above.")
GIVEN = ("一郎", "花子", "健太", "美咲", "翔", "陽子")
FAMILY = ("鈴木", "佐藤", "高橋", "田中", "渡辺", "伊藤")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
LONG_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
               "November", "December")


@dataclass(frozen=True)
class Case:
    """One value in one document: `span` is where a copied value must be found (None: made up)."""

    kind: str
    document: str
    value: Any
    span: tuple[int, int] | None

    @property
    def made_up(self) -> bool:
        return self.span is None


class _Doc:
    """A document built piece by piece, remembering where a planted piece starts and ends."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.text = ""
        self.filler()

    def filler(self) -> None:
        self.text += " ".join(self.rng.sample(FILLER, 2)) + "\n"

    def add(self, before: str, planted: str, after: str = "\n") -> tuple[int, int]:
        self.text += before
        start = len(self.text)
        self.text += planted + after
        self.filler()
        return start, start + len(planted)


def _amount(rng: random.Random, low: int = 1000, high: int = 999_999) -> tuple[int, int]:
    return rng.randint(low, high), rng.randint(1, 99)


def _grouped(whole: int, sep: str) -> str:
    return f"{whole:,}".replace(",", sep)


# -- made-up values ------------------------------------------------------------------------------

def near_name(rng: random.Random) -> Case:
    """A company whose distinctive word differs: `Kranich Handels GmbH` for `Kranich Software GmbH`."""
    doc = _Doc(rng)
    if rng.random() < .5:
        surname, form = rng.choice(SURNAMES), rng.choice(FORMS)
        printed, other = rng.sample(KINDS, 2)
        doc.add("From: ", f"{surname} {printed} {form}")
        return Case("near name", doc.text, f"{surname} {other} {form}", None)
    head = rng.choice(SPANISH)
    printed, other = rng.sample(WORDS, 2)
    doc.add("Proveedor: ", f"{head} {printed} S.L", ", Madrid\n")
    return Case("near name", doc.text, f"{head} {other} S.L.", None)


def truncated_id(rng: random.Random) -> Case:
    """An id with a part more or a part less than the one printed (`INV-2026-060` at `INV-2026`)."""
    doc = _Doc(rng)
    prefix, year, number = rng.choice(("INV", "RE", "PO", "ORD")), rng.randint(2019, 2027), rng.randint(1, 999)
    full, short = f"{prefix}-{year}-{number:03d}", f"{prefix}-{year}"
    if rng.random() < .5:
        doc.add("Invoice no. ", short)
        return Case("truncated id", doc.text, full, None)
    doc.add("Invoice no. ", full)
    return Case("truncated id", doc.text, short, None)


def number_inside_number(rng: random.Random) -> Case:
    """A tail of a grouped number: 234.5 in `1 234,50 EUR`; 567.89 in `CHF 1'234'567.89`."""
    doc = _Doc(rng)
    whole, cents = _amount(rng, 1_000, 9_999_999)
    style = rng.choice((" ", "'", "\u202f"))
    printed = f"{_grouped(whole, style)},{cents:02d}" if style != "'" else f"{_grouped(whole, style)}.{cents:02d}"
    doc.add("Total ", printed, " EUR\n" if style != "'" else " CHF\n")
    tail = whole % 10 ** (3 * rng.randint(1, (len(str(whole)) - 1) // 3))
    value = float(f"{tail}.{cents:02d}")
    return Case("number inside number", doc.text, value if rng.random() < .7 else f"{tail}.{cents:02d}", None)


def date_order(rng: random.Random) -> Case:
    """A dotted (day-first) date read month-first: `2026-01-03` at `01.03.2026`."""
    doc = _Doc(rng)
    year, first, second = rng.randint(2019, 2027), rng.randint(1, 12), rng.randint(1, 12)
    while first == second:
        second = rng.randint(1, 12)
    doc.add("Rechnungsdatum: ", f"{first:02d}.{second:02d}.{year}")  # day `first`, month `second`
    return Case("date order", doc.text, f"{year}-{first:02d}-{second:02d}", None)


def currency_sign(rng: random.Random) -> Case:
    """USD claimed on an invoice whose `$` is another dollar or peso, named on it."""
    doc = _Doc(rng)
    code = rng.choice(("MXN", "CAD", "AUD"))
    whole, cents = _amount(rng)
    doc.add("Total: ", f"${_grouped(whole, ',')}.{cents:02d}", f" {code}\n")
    return Case("currency sign", doc.text, "USD", None)


# -- copied values -------------------------------------------------------------------------------

def negative_then_number(rng: random.Random) -> Case:
    """A debit followed by the balance, on one line or across lines: `Contactless -63.87 1,674.69`."""
    doc = _Doc(rng)
    debit = f"-{rng.randint(1, 999)}.{rng.randint(0, 99):02d}"
    balance = f"{_grouped(rng.randint(1000, 99999), ',')}.{rng.randint(0, 99):02d}"
    span = doc.add("Contactless ", debit, rng.choice((" ", "\n", "  ")) + balance + "\n")
    return Case("negative then number", doc.text, float(debit), span)


def yen_suffix(rng: random.Random) -> Case:
    doc = _Doc(rng)
    whole = rng.randint(1000, 999999)
    span = doc.add("合計 ", _grouped(whole, ","), "円\n")
    return Case("yen suffix", doc.text, whole, span)


def dropped_spaces(rng: random.Random) -> Case:
    """An IBAN or a dose the model wrote without its spaces: `GB815286599` for `GB 815 2865 99`."""
    doc = _Doc(rng)
    if rng.random() < .5:
        groups = [rng.choice(("GB", "DE", "FR", "NL"))] + [str(rng.randint(100, 9999)) for _ in range(rng.randint(3, 5))]
        span = doc.add("IBAN: ", " ".join(groups))
        return Case("dropped spaces", doc.text, "".join(groups), span)
    dose = f"{rng.randint(1, 999)} {rng.choice(('mg', 'ml', 'kg', 'g'))}"
    span = doc.add("Dose: ", dose, " daily\n")
    return Case("dropped spaces", doc.text, dose.replace(" ", ""), span)


def month_year(rng: random.Random) -> Case:
    doc = _Doc(rng)
    year, month = rng.randint(2000, 2030), rng.randint(1, 12)
    printed = rng.choice((f"{MONTHS[month - 1]} {year}", f"{LONG_MONTHS[month - 1]} {year}", f"{month:02d}/{year}"))
    span = doc.add("Statement period: ", printed)
    return Case("month year", doc.text, f"{year}-{month:02d}", span)


def honorific(rng: random.Random) -> Case:
    doc = _Doc(rng)
    name = rng.choice(FAMILY) + rng.choice(GIVEN)
    span = doc.add("請求先: ", name, rng.choice(("様", "殿", "さん")) + "\n")
    return Case("honorific", doc.text, name, span)


def plain_copy(rng: random.Random) -> Case:
    """The everyday values a gate must not flag: names, ids, amounts, dates as printed or normalised."""
    doc = _Doc(rng)
    roll = rng.randrange(6)
    if roll == 0:
        name = f"{rng.choice(SURNAMES)} {rng.choice(KINDS)} {rng.choice(FORMS)}"
        span = doc.add("From: ", name)
        return Case("plain copy", doc.text, name, span)
    if roll == 1:
        number = f"INV-{rng.randint(2019, 2027)}-{rng.randint(1, 999):03d}"
        span = doc.add("Invoice no. ", number, ", page 1\n")
        return Case("plain copy", doc.text, number, span)
    whole, cents = _amount(rng)
    if roll in (2, 3):
        span = doc.add("Total " if roll == 2 else "Amount due: ",
                       f"{_grouped(whole, '.' if roll == 2 else ' ')},{cents:02d}", " EUR\n")
        return Case("plain copy", doc.text, float(f"{whole}.{cents:02d}"), span)
    year, month, day = rng.randint(2019, 2027), rng.randint(1, 12), rng.randint(1, 28)
    written = f"{day:02d}.{month:02d}.{year}" if roll == 4 else f"{day} {LONG_MONTHS[month - 1]} {year}"
    span = doc.add("Datum: " if roll == 4 else "Date: ", written)
    return Case("plain copy", doc.text, f"{year}-{month:02d}-{day:02d}", span)


MADE_UP: tuple[Callable[[random.Random], Case], ...] = (near_name, truncated_id, number_inside_number, date_order,
                                                         currency_sign)
COPIED: tuple[Callable[[random.Random], Case], ...] = (negative_then_number, yen_suffix, dropped_spaces, month_year,
                                                        honorific, plain_copy)
CLASSES = MADE_UP + COPIED


def cases(seed: int, per_class: int) -> Iterator[Case]:
    rng = random.Random(seed)
    for make in CLASSES:
        for _ in range(per_class):
            yield make(rng)
