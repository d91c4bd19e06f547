"""kb.core.schema: each fix kind is declared once (FIX_KINDS), and the Literal the table's rows are
checked against names exactly those kinds."""

from __future__ import annotations

from typing import get_args

import pytest
from pydantic import ValidationError

from kb.core.schema import FIX_KINDS, Fix, FixKind


def test_the_fix_kinds_table_names_every_kind_once():
    assert set(get_args(FixKind)) == set(FIX_KINDS)


@pytest.mark.parametrize("kind", sorted(FIX_KINDS))
def test_each_kind_takes_exactly_its_fields(kind: str):
    spec = FIX_KINDS[kind]
    given = {"to": "torch.accelerator.synchronize", "expression": "torch.accelerator.current_accelerator()"}
    given["literal"] = "cuda"
    Fix(kind=kind, **{f: given[f] for f in spec.fields})
    extra = next(f for f in ("to", "expression", "literal") if f not in spec.fields)
    with pytest.raises(ValidationError, match=f"a {kind} fix takes"):
        Fix(kind=kind, **{f: given[f] for f in (*spec.fields, extra)})


def test_guard_is_refused_where_the_table_says():
    for kind, spec in FIX_KINDS.items():
        fields = {f: "torch.accelerator.synchronize" if f == "to" else "torch.float32" for f in spec.fields}
        if spec.guardable:
            assert Fix(kind=kind, guard=True, **fields).guard
        else:
            with pytest.raises(ValidationError, match="guard applies to a rename fix only"):
                Fix(kind=kind, guard=True, **fields)
