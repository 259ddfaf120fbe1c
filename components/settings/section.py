"""What every section of the configuration model (settings/sections.py and the sections_*.py beside it) is:
a frozen pydantic model, snake_case fields with the stack keys as aliases, unknown keys refused, and a bad
value in a section built in Python raised as ConfigError in the program's words (`Section._program_words`),
every field at once."""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ModelWrapValidatorHandler, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from ..diagnostics import ConfigError
from .messages import from_pydantic, nested, pydantic_errors


class Section(BaseModel):
    """Every key is optional: a field's default (often None, "not set") is not validated, a value given must
    have the field's type. Whether a key is required is a rule's (settings/rules/; its message names what to
    set). Fields are snake_case, the stack keys their aliases; Python callers may use either. Patterns run on
    Python's re, which the JSON Schema validators use too (the default Rust engine has no look-ahead;
    components/settings/patterns.py)."""

    model_config = ConfigDict(alias_generator=to_camel, validate_by_name=True, validate_by_alias=True,
                              extra="forbid", frozen=True, regex_engine="python-re")

    @model_validator(mode="before")
    @classmethod
    def _none_is_unset(cls, data: Any) -> Any:
        """A program's `ip_block=None` means what leaving it out means (a stack file's `key: ~` is refused
        before validation: settings/stackconfig.py)."""
        return {k: v for k, v in data.items() if v is not None} if isinstance(data, dict) else data

    @model_validator(mode="wrap")
    @classmethod
    def _program_words(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        if nested():
            return handler(data)
        with pydantic_errors():
            try:
                return handler(data)
            except ValidationError as exc:
                raise ConfigError(from_pydantic(cls, exc, data), prefix=f"{cls.__name__}: ") from None
