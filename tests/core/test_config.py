"""The README's configuration table and the settings the code reads
(app/core/config.py) name the same variables: a setting added without a row,
or a row left behind when a setting goes, fails here."""

from __future__ import annotations

import re
from pathlib import Path

from app.core.config import Settings

README = Path(__file__).resolve().parents[2] / "README.md"
#: rows for `make run`'s own variables (the Makefile reads them, not the app)
MAKEFILE_ONLY = {"HOST", "PORT"}


def _table_names(section: str) -> set[str]:
    """The variables named in the first column of the section's table."""
    text = README.read_text()
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for line in body.splitlines():
        if line.startswith("| `"):
            first = line.split("|")[1]
            names.update(re.findall(r"`([A-Z][A-Z0-9_]*)`", first))
    return names


def test_every_setting_has_a_row_and_every_row_a_setting() -> None:
    documented = _table_names("Configuration")
    read = {name.upper() for name in Settings.model_fields}
    assert read - documented == set(), "settings missing from README's table"
    assert documented - read - MAKEFILE_ONLY == set(), "README rows for no setting"
