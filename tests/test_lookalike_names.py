"""Look-alike prompt names (NFC and NFD `café`, a Cyrillic `е` in `extract`) do not coexist silently:
`check` warns on each, naming the other file."""

from __future__ import annotations

import unicodedata

from dotprompt.lint.check import check_library


def test_nfc_and_nfd_names_warn(folder):
    nfc, nfd = unicodedata.normalize("NFC", "café"), unicodedata.normalize("NFD", "café")
    assert nfc != nfd
    folder.write(f"{nfc}.prompt", "hi")
    folder.write(f"{nfd}.prompt", "hi")
    warnings = [d for d in check_library(folder.library()) if "looks like" in d.message]
    assert len(warnings) == 2 and all(d.level == "warning" for d in warnings)
    assert "NFC" in warnings[0].message or "Unicode" in warnings[0].message


def test_a_cyrillic_letter_warns(folder):
    folder.write("extract.prompt", "hi")
    folder.write("\u0435xtract.prompt", "hi")  # a Cyrillic е first
    warnings = [d for d in check_library(folder.library()) if "looks like" in d.message]
    assert len(warnings) == 2 and any("U+0435" in d.message for d in warnings)


def test_distinct_names_do_not_warn(folder):
    folder.write("extract.prompt", "hi")
    folder.write("extract2.prompt", "hi")
    folder.write("café.prompt", "hi")
    assert [d for d in check_library(folder.library()) if "looks like" in d.message] == []


def test_names_compare_in_nfc(folder):
    # A file saved with a decomposed name (as macOS writes them) loads by the composed name, and back.
    folder.write(unicodedata.normalize("NFD", "café.prompt"), "hi from the file")
    lib = folder.library()
    assert "hi from the file" in lib.load(unicodedata.normalize("NFC", "café")).render({}).messages[0].content[0].text
    folder.write(unicodedata.normalize("NFC", "thé.prompt"), "tea")
    assert lib.load(unicodedata.normalize("NFD", "thé")).render({}).messages[0].content[0].text.startswith("tea")
