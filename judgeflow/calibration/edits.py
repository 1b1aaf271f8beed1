"""Concrete edits to a criterion's data fields, and the criterion file they produce.

    edit = CriterionEdit(field="not_errors", action="add", new="correct dates the reference lacks")
    tuned = apply_edit(criterion, edit)                  # a new, validated Criterion (or EditError)
    text = edited_toml(original_text, criterion, tuned)  # the file with only that key rewritten

An editor model may change only the criterion's data, never its prompts: the `not_errors` list,
the `fact_kinds` list, and the meaning of a verdict (`verdicts.<name>`). Each edit names the
field, the exact old text (for replace/remove), the new text, and the disagreements it is meant
to fix, so a person can read it like a code review.
"""

from __future__ import annotations

import difflib
import json
import re
import sys
from typing import Any, Literal

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

from pydantic import BaseModel, Field, ValidationError, create_model, field_validator

from ..criteria import Criterion
from ..schemas import ReplyModel, enum_field

Action = Literal["add", "replace", "remove"]
LIST_FIELDS = ("not_errors", "fact_kinds")


class EditError(ValueError):
    """An edit that cannot be applied (unknown field, old text not found, an invalid result)."""


class CriterionEdit(BaseModel):
    """One proposed change to a criterion's data."""

    field: str
    """`not_errors`, `fact_kinds` or `verdicts.<name>`."""
    action: Action
    """add (an entry to a list), replace (an entry, or a verdict's meaning), remove (an entry)."""
    old: str = ""
    """The exact current text replaced or removed (empty for add)."""
    new: str = ""
    """The new text (empty for remove)."""
    addresses: list[str] = Field(default_factory=list)
    """Ids of the disagreements this edit is meant to fix."""
    why: str = ""

    def describe(self) -> str:
        if self.action == "add":
            return f"{self.field}: add {self.new!r}"
        if self.action == "remove":
            return f"{self.field}: remove {self.old!r}"
        return f"{self.field}: {self.old!r} -> {self.new!r}"

    def key(self) -> tuple[str, str, str, str]:
        """The same edit however it is spaced or capitalised (for counting repeats across folds)."""
        return self.field, self.action, _norm(self.old), _norm(self.new)


def editable_fields(criterion: Criterion) -> list[str]:
    """The fields an edit may name for this criterion."""
    return [*LIST_FIELDS, *(f"verdicts.{v}" for v in criterion.verdicts)]


def edits_reply(criterion: Criterion, max_edits: int) -> type[ReplyModel]:
    """The typed reply asked of the editor model: up to `max_edits` edits, most useful first."""
    fields = tuple(editable_fields(criterion))

    def one_of(allowed: tuple[str, ...]) -> Any:
        def check(cls: Any, v: str) -> str:
            if v not in allowed:
                raise ValueError(f"{v!r} is not one of {list(allowed)}")
            return v
        return classmethod(check)

    entry = create_model(
        "CriterionEdit", __base__=ReplyModel,
        __validators__={"_field": field_validator("field")(one_of(fields)),
                        "_action": field_validator("action")(one_of(("add", "replace", "remove")))},
        field=enum_field(fields, "The criterion field to change."),
        action=enum_field(("add", "replace", "remove"), "add an entry to a list; replace an entry or a verdict's "
                     "meaning; remove an entry from a list."),
        old=(str, Field("", description="The exact current text replaced or removed; empty for add.")),
        new=(str, Field("", description="The new text; empty for remove. One short line.")),
        addresses=(list[str], Field(default_factory=list, description="Ids of the disagreements it fixes.")),
        why=(str, Field("", description="One sentence: why this fixes them.")),
    )
    return create_model(
        "CriterionEdits", __base__=ReplyModel, __doc__="Concrete edits to the criterion's data, most useful first.",
        edits=(list[entry], Field(json_schema_extra={"maxItems": max_edits})),  # type: ignore[valid-type]
    )


def read_edits(reply: BaseModel, max_edits: int) -> list[CriterionEdit]:
    """The reply's edits as CriterionEdit records (at most `max_edits`; typed by the reply model)."""
    out = []
    for e in getattr(reply, "edits", [])[:max_edits]:
        try:
            out.append(CriterionEdit.model_validate(e.model_dump()))
        except ValidationError:  # an action outside the enum (a model without constrained decoding)
            continue
    return out


#: the longest text an edit may write (a not_errors entry or a verdict's meaning is one short line;
#: every later check request carries it, in every run that uses the tuned file)
MAX_EDIT_CHARS = 300
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def checked_text(new: str) -> str:
    """Model-written criterion text, refused unless it is one short plain line (no control
    characters, no line breaks, no tags the prompts would have to neutralise)."""
    from ..prompts import neutralize

    if len(new) > MAX_EDIT_CHARS:
        raise EditError(f"the new text is {len(new):,} characters; an edit writes one short line "
                        f"(at most {MAX_EDIT_CHARS})")
    if _CONTROL.search(new):
        raise EditError("the new text holds a line break or a control character; an edit writes one plain line")
    if neutralize(new) != new:
        raise EditError("the new text holds a tag the prompts would neutralise; an edit writes plain text")
    return new


def apply_edit(criterion: Criterion, edit: CriterionEdit) -> Criterion:
    """The criterion with `edit` applied, validated like a loaded file.

    Raises:
        EditError: the field is not editable, the old text is not there, or the result is invalid.
    """
    if edit.field not in editable_fields(criterion):
        raise EditError(f"field {edit.field!r} is not editable; use one of {editable_fields(criterion)}")
    new, old = edit.new.strip(), edit.old.strip()
    if edit.action != "remove" and not new:
        raise EditError(f"{edit.action} needs new text")
    checked_text(new)
    data = criterion.model_dump()
    if edit.field in LIST_FIELDS:
        data[edit.field] = _edited_list(list(data[edit.field]), edit.action, old, new, edit.field)
    else:
        name = edit.field.split(".", 1)[1]
        if edit.action != "replace":
            raise EditError(f"a verdict's meaning can only be replaced ({edit.action} asked)")
        if old and _norm(old) != _norm(data["verdicts"][name]):
            raise EditError(f"old text is not the current meaning of verdict {name!r}")
        data["verdicts"] = {**data["verdicts"], name: new}
    if data == criterion.model_dump():
        raise EditError("the edit changes nothing")
    try:
        return Criterion(**data)
    except ValidationError as e:
        raise EditError(f"the edited criterion is invalid: {e.errors()[0]['msg']}") from None


def _norm(s: str) -> str:
    """Text compared the way a person would: case and spacing do not matter."""
    return " ".join(s.lower().split())


def _edited_list(values: list[str], action: str, old: str, new: str, field: str) -> list[str]:
    normed = [_norm(v) for v in values]
    if action == "add":
        if _norm(new) in normed:
            raise EditError(f"{new!r} is already in {field}")
        return [*values, new]
    if _norm(old) not in normed:
        raise EditError(f"old text {old!r} is not an entry of {field}")
    i = normed.index(_norm(old))
    return values[:i] + values[i + 1:] if action == "remove" else [*values[:i], new, *values[i + 1:]]


# -- the new file --------------------------------------------------------------------------


def edited_toml(text: str, old: Criterion, new: Criterion) -> str:
    """The criterion file `text` (of `old`) with the keys that differ in `new` rewritten in place,
    comments kept; the whole criterion written out when the file's layout defeats that."""
    out = text
    for key in ("not_errors", "fact_kinds"):
        if getattr(old, key) != getattr(new, key):
            out = _set_top_level(out, key, getattr(new, key))
    for name, meaning in new.verdicts.items():
        if old.verdicts.get(name) != meaning:
            out = _set_verdict(out, name, meaning)
    if same_criterion(out, new):
        return out
    return dump_criterion(new)


def same_criterion(text: str, criterion: Criterion) -> bool:
    """True when the TOML `text` loads to `criterion` (its path aside)."""
    try:
        data = tomllib.loads(text)
        return Criterion(**data).model_dump(exclude={"path"}) == criterion.model_dump(exclude={"path"})
    except (tomllib.TOMLDecodeError, ValidationError, TypeError):
        return False


def _array(values: list[str]) -> str:
    one_line = "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in values) + "]"
    if len(one_line) <= 90:
        return one_line
    return "[\n" + "".join(f"    {json.dumps(v, ensure_ascii=False)},\n" for v in values) + "]"


def _set_top_level(text: str, key: str, values: list[str]) -> str:
    line = f"{key} = {_array(values)}\n"
    m = re.search(rf"(?m)^{key}\s*=\s*\[", text)
    if m is None:  # absent: before the first table (top-level keys must come first)
        table = re.search(r"(?m)^\[", text)
        at = table.start() if table else len(text)
        return text[:at].rstrip("\n") + "\n" + line + ("\n" if table else "") + text[at:]
    end = m.end()
    while (end := text.find("]", end)) >= 0:  # the first "]" that closes a valid array
        end += 1
        try:
            tomllib.loads("x = " + text[m.end() - 1:end])
            break
        except tomllib.TOMLDecodeError:
            continue
    else:
        return text
    rest = text[end:]
    return text[:m.start()] + line.rstrip("\n") + rest


def _set_verdict(text: str, name: str, meaning: str) -> str:
    table = re.search(r"(?m)^\[verdicts\]\s*$", text)
    if table is None:
        return text
    m = re.compile(rf"(?m)^{re.escape(name)}[ \t]*=[ \t]*(\"[^\n]*\"|'[^\n]*')[ \t]*$").search(text, table.end())
    if m is None:
        return text
    return text[:m.start()] + f"{name} = {json.dumps(meaning, ensure_ascii=False)}" + text[m.end():]


def _value(v: Any) -> str:
    if isinstance(v, str):
        if "\n" in v and "'''" not in v:
            return f"'''\n{v.strip(chr(10))}\n'''"
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return json.dumps(v)


def dump_criterion(c: Criterion) -> str:
    """The criterion as a TOML file (without comments) that loads back to the same Criterion."""
    data = c.model_dump(exclude={"path"}, exclude_none=True, by_alias=True)
    tables = {k: data.pop(k) for k in ("roles", "route", "verdicts", "prompts", "coverage", "knowledge") if k in data}
    lines = [f"{k} = {_value(v)}" for k, v in data.items()]
    for name, table in tables.items():
        if not table:
            continue
        lines += ["", f"[{name}]", *(f"{k} = {_value(v)}" for k, v in table.items())]
    return "\n".join(lines) + "\n"


def toml_diff(old_text: str, new_text: str, old_name: str, new_name: str) -> str:
    """A unified diff of two criterion files."""
    return "".join(difflib.unified_diff(old_text.splitlines(keepends=True), new_text.splitlines(keepends=True),
                                        fromfile=old_name, tofile=new_name))
