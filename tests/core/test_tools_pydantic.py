"""Tools whose parameters are pydantic models (pydantic is optional: skipped without it)."""

from __future__ import annotations

import pytest

from modelstream import ToolArgumentsError, tool

pydantic = pytest.importorskip("pydantic")


class Address(pydantic.BaseModel):  # type: ignore[misc,name-defined]
    street: str
    postcode: str = pydantic.Field(pattern=r"^\d{4}-\d{3}$")


class Person(pydantic.BaseModel):  # type: ignore[misc,name-defined]
    name: str
    address: Address


def register(person: Person, notify: bool = False) -> str:
    """Register a person.

    Args:
        person: Who to register.
        notify: Send them a mail.
    """
    return f"{person.name} at {person.address.postcode} {notify}"


REGISTER_SCHEMA = {
    "name": "register",
    "description": "Register a person.",
    "parameters": {
        "type": "object",
        "properties": {
            "person": {
                "type": "object",
                "title": "Person",
                "description": "Who to register.",
                "properties": {
                    "name": {"type": "string", "title": "Name"},
                    "address": {"$ref": "#/$defs/Address"},
                },
                "required": ["name", "address"],
            },
            "notify": {"type": "boolean", "description": "Send them a mail.", "default": False},
        },
        "required": ["person"],
        "additionalProperties": False,
        "$defs": {
            "Address": {
                "type": "object",
                "title": "Address",
                "properties": {
                    "street": {"type": "string", "title": "Street"},
                    "postcode": {
                        "type": "string",
                        "title": "Postcode",
                        "pattern": r"^\d{4}-\d{3}$",
                    },
                },
                "required": ["street", "postcode"],
            }
        },
    },
}


def test_a_pydantic_model_gives_its_own_schema_with_its_defs_at_the_top():
    assert tool(register).definition == REGISTER_SCHEMA


def test_a_pydantic_argument_arrives_as_the_model():
    person = {"name": "Ana", "address": {"street": "Rua A", "postcode": "1000-001"}}
    arguments = tool(register).validate({"person": person})
    assert arguments == {"person": Person(name="Ana", address=Address(**person["address"]))}
    assert tool(register).call({"person": person}) == "Ana at 1000-001 False"


def test_a_nested_model_field_that_breaks_its_pattern_is_refused_with_its_path():
    person = {"name": "Ana", "address": {"street": "Rua A", "postcode": "1000"}}
    with pytest.raises(ToolArgumentsError) as raised:
        tool(register).validate({"person": person})
    assert raised.value.problems == [
        """`person.address.postcode`: "1000" does not match '^\\\\d{4}-\\\\d{3}$'"""
    ]
