"""The README's configuration table and the settings the code reads
(app/core/config.py) name the same variables: a setting added without a row,
or a row left behind when a setting goes, fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

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


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"DEAL_CYCLE": "3"}, "set DEAL_SEED too"),  # would repeat nothing, silently
        ({"DEAL_SEED": "36", "DEAL_CYCLE": "0"}, "greater than 0"),
        ({"DEAL_SEED": "36", "DEAL_CYCLE": "-2"}, "greater than 0"),
    ],
)
def test_a_deal_cycle_is_refused_without_a_seed_or_below_one(
    env: dict[str, str], said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DEAL_SEED", raising=False)  # tests/conftest.py sets one
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError, match=said):
        Settings(_env_file=None)


def test_a_deal_cycle_with_a_seed_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEAL_SEED", "36")
    monkeypatch.setenv("DEAL_CYCLE", "10")
    settings = Settings(_env_file=None)
    assert (settings.deal_seed, settings.deal_cycle) == (36, 10)
