"""Chat templates: found (a template file, or the tokenizer's own: ``chat_template.jinja``, or
``chat_template`` in ``tokenizer_config.json``) and rendered as Hugging Face
``apply_chat_template`` renders them: Jinja2 in an immutable sandbox with ``trim_blocks`` and
``lstrip_blocks``, loop controls (``break``, ``continue``), the ``{% generation %}`` block
(rendered as its body), ``tojson`` as transformers writes it (no key sorting, no HTML
escaping, non-ASCII kept), ``raise_exception`` and ``strftime_now``, and the variables
``messages``, ``tools`` and ``documents`` (None), ``add_generation_prompt``, and the special
tokens' strings (``bos_token``, ``eos_token``...).

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


def tokenizer_folder(tokenizer: str) -> Path:
    """The folder holding a tokenizer's files: the folder itself, a file's parent, or a hub
    name's snapshot in the local cache (as the tokenizer was loaded)."""
    from auditor.loading.tokenizers import _HUB_NAME, cached_snapshot

    kind, sep, rest = tokenizer.partition(":")
    local = Path(rest if sep and not Path(tokenizer).exists() else tokenizer).expanduser()
    if not local.exists() and _HUB_NAME.match(tokenizer):
        return cached_snapshot(tokenizer)
    return local if local.is_dir() else local.parent


def template_text(template: Path | None, tokenizer: str) -> tuple[str, str]:
    """The template's text and where it came from: the file ``template``, else beside the
    tokenizer its ``chat_template.jinja``, else the ``chat_template`` of its
    ``tokenizer_config.json`` (a list of named templates: the one named ``default``)."""
    if template is not None:
        from auditor.core.inputs import check_input_path

        check_input_path(template, what="chat template")  # a FIFO would block the read
        try:
            return Path(template).read_text(encoding="utf-8"), str(template)
        except (OSError, UnicodeDecodeError) as err:
            raise InputError(f"{template}: cannot read the chat template: {err}") from None
    folder = tokenizer_folder(tokenizer)
    jinja = folder / "chat_template.jinja"
    if jinja.is_file():
        return jinja.read_text(encoding="utf-8"), str(jinja)
    config = folder / "tokenizer_config.json"
    if not config.is_file():
        raise InputError(f"tokens.chat: no chat template: declare tokens.chat.template (a Jinja "
                         f"file), or put chat_template.jinja or a tokenizer_config.json with "
                         f"chat_template beside the tokenizer ({config} not found)")
    found = _config(config).get("chat_template")
    if isinstance(found, list):
        found = next((t.get("template") for t in found if isinstance(t, dict)
                      and t.get("name") == "default"), None)
    if not isinstance(found, str) or not found:
        raise InputError(f"{config}: no chat_template; declare tokens.chat.template")
    return found, str(config)


def _config(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise InputError(f"{path}: cannot read: {err}") from None
    return found if isinstance(found, dict) else {}


SPECIAL_NAMES = ("bos_token", "eos_token", "pad_token", "unk_token")


def special_strings(tokenizer: str, fallback: dict[str, str]) -> dict[str, str]:
    """The special tokens' strings a template is rendered with, as transformers passes them:
    from the tokenizer's ``tokenizer_config.json`` (or ``special_tokens_map.json``) where it
    names them (null: ""), else ``fallback`` (the strings of the ids the audit uses)."""
    out = dict(fallback)
    try:
        folder = tokenizer_folder(tokenizer)
    except InputError:
        return out
    for name in ("special_tokens_map.json", "tokenizer_config.json"):  # the config wins
        path = folder / name
        if not path.is_file():
            continue
        conf = _config(path)
        for key in SPECIAL_NAMES:
            if key in conf:
                v = conf[key]
                out[key] = (v.get("content", "") if isinstance(v, dict) else v or "")
    return out


@lru_cache(maxsize=8)
def compiled(text: str, source: str = "chat template") -> Any:
    """The template compiled once per process (per text); ``source`` names it in errors."""
    from jinja2 import nodes
    from jinja2.exceptions import TemplateSyntaxError
    from jinja2.ext import Extension, loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Generation(Extension):
        """``{% generation %}...{% endgeneration %}``: the assistant's part, rendered as is."""

        tags = {"generation"}

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return nodes.Scope(body, lineno=lineno)

    def raise_exception(message: str) -> None:
        raise TemplateError(message)

    def tojson(x: Any, ensure_ascii: bool = False, indent: Any = None,
               separators: Any = None, sort_keys: bool = False) -> str:
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def strftime_now(fmt: str) -> str:
        from datetime import datetime

        return datetime.now().strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[Generation, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals.update(raise_exception=raise_exception, strftime_now=strftime_now)
    try:
        return env.from_string(text)
    except TemplateSyntaxError as err:
        raise InputError(f"{source}: chat template line {err.lineno}: {err.message}") from None


def render(text: str, messages: list[dict[str, Any]], specials: dict[str, str], *,
           generation_prompt: bool = False) -> str:
    """``messages`` rendered by the template ``text``; TemplateError when it refuses them or
    fails on them (any error of the template's own code)."""
    try:
        out: str = compiled(text).render(messages=messages, tools=None, documents=None,
                                         add_generation_prompt=generation_prompt, **specials)
    except TemplateError:
        raise
    except (MemoryError, KeyboardInterrupt):
        raise
    except Exception as err:  # a template is code: whatever it raises is its refusal
        raise TemplateError(f"{type(err).__name__}: {err}") from None
    return out
