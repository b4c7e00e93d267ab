"""Chat templates: found (a template file, or the tokenizer's ``chat_template``) and rendered
as Hugging Face ``apply_chat_template`` renders them: Jinja2 in an immutable sandbox with
``trim_blocks`` and ``lstrip_blocks``, ``raise_exception`` available, and the variables
``messages``, ``add_generation_prompt``, ``bos_token``, ``eos_token`` (and the other special
tokens' strings) given.

A template that cannot be read or compiled is an InputError naming the file (exit 2); a
template that raises on a row (a role it refuses) is reported per row by the check."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from auditor.errors import InputError


class TemplateError(Exception):
    """The template refused a conversation (its ``raise_exception``, or a Jinja error)."""


def template_text(template: Path | None, tokenizer: str) -> tuple[str, str]:
    """The template's text and where it came from: the file ``template``, else the
    ``chat_template`` of the ``tokenizer_config.json`` inside a tokenizer folder or beside a
    tokenizer file (a list of named templates: the one named ``default``)."""
    if template is not None:
        try:
            return Path(template).read_text(encoding="utf-8"), str(template)
        except (OSError, UnicodeDecodeError) as err:
            raise InputError(f"{template}: cannot read the chat template: {err}") from None
    local = Path(tokenizer.partition(":")[2] if ":" in tokenizer and not Path(tokenizer).exists()
                 else tokenizer).expanduser()
    config = (local if local.is_dir() else local.parent) / "tokenizer_config.json"
    if not config.is_file():
        raise InputError(f"tokens.chat: no chat template: declare tokens.chat.template (a Jinja "
                         f"file), or put a tokenizer_config.json with chat_template beside "
                         f"the tokenizer ({config} not found)")
    try:
        found = json.loads(config.read_text(encoding="utf-8")).get("chat_template")
    except (OSError, ValueError, AttributeError) as err:
        raise InputError(f"{config}: cannot read chat_template: {err}") from None
    if isinstance(found, list):
        found = next((t.get("template") for t in found if isinstance(t, dict)
                      and t.get("name") == "default"), None)
    if not isinstance(found, str) or not found:
        raise InputError(f"{config}: no chat_template; declare tokens.chat.template")
    return found, str(config)


@lru_cache(maxsize=8)
def compiled(text: str, source: str = "chat template") -> Any:
    """The template compiled once per process (per text); ``source`` names it in errors."""
    from jinja2.exceptions import TemplateSyntaxError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    try:
        return env.from_string(text)
    except TemplateSyntaxError as err:
        raise InputError(f"{source}: chat template line {err.lineno}: {err.message}") from None


def render(text: str, messages: list[dict[str, Any]], specials: dict[str, str], *,
           generation_prompt: bool = False) -> str:
    """``messages`` rendered by the template ``text``; TemplateError when it refuses them."""
    from jinja2.exceptions import TemplateError as JinjaError

    try:
        out: str = compiled(text).render(messages=messages,
                                         add_generation_prompt=generation_prompt, **specials)
    except TemplateError:
        raise
    except (JinjaError, TypeError, KeyError, ValueError) as err:
        raise TemplateError(str(err)) from None
    return out
