"""Structured answers: JSON read as the model streams it."""

from .partial_json import NOTHING, PartialJSON, PartialJSONError

__all__ = ["NOTHING", "PartialJSON", "PartialJSONError"]
