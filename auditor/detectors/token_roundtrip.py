"""tokens.roundtrip: decode(encode(text)) against text, and stored ids against encode(text)."""
from __future__ import annotations

import difflib
from itertools import chain
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

import numpy as np
import polars as pl

from auditor.core.checks import Cost, Needs
from auditor.core.config import Tokens
from auditor.core.roles import Roles as RunRoles
from auditor.detectors.measured import judged
from auditor.detectors.token_findings import by_split_text, short
from auditor.detectors.token_layout import Flat, chunk_layout, chunk_runs
from auditor.engines.operations import Operations
from auditor.errors import NotApplicable
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import fmt_count, fmt_share, grade, share

CATEGORIES = ("exact", "normalised", "unk", "whitespace", "other")
LABELS = {"exact": "identical", "normalised": "equal after the tokenizer's normaliser",
          "unk": "characters lost to UNK", "whitespace": "whitespace-only difference",
          "other": "other difference"}
BATCH = 16_384  # rows per native encode/decode call (bounds memory)


@dataclass(frozen=True, kw_only=True)
class RoundTrip:
    """Texts that do not survive decode(encode(text)), and stored ids that are not encode(text).

    A fail means the tokenizer loses information the model needs (characters become UNK or are
    changed beyond the tokenizer's own normalisation), or the stored ``input_ids`` were not
    produced from the stored text by this tokenizer: another tokenizer or version tokenized the
    data, or text and ids are misaligned. Fix: ship the tokenizer that made the data, re-tokenize,
    or choose a tokenizer with byte fallback.

    Each checked row is classified, first match wins: exact; equal after the tokenizer's own
    normaliser (an expected loss such as lowercasing or NFKC); characters lost to UNK
    (the encoding holds the UNK id); whitespace-only difference; other. Stale: the stored ids of
    the content (padding dropped, control tokens removed) differ from encode(text) with control
    tokens removed, where a row cut at max_length only needs to be a prefix. Every row with a
    text is checked by default (``sample_rows`` None); with ``sample_rows`` set, up to that many
    rows per split (a seeded sample when larger, stated in the message). Values are shares of
    the checked rows, and every message states how many rows were checked.

    Rows equal only after the normaliser are not lossy by the tokenizer's own definition, but
    when the normaliser changes characters beyond case and whitespace (NFKC folding full-width
    letters, ligatures, superscripts or compatibility ideographs into other characters;
    accents stripped) the model never sees those characters. Normaliser changes = rows where
    ``lower(squash(text)) != lower(squash(decode(encode(text))))`` (``squash`` drops
    whitespace) among them; a warn above ``normaliser_warn_above`` (share of checked rows),
    with the characters the normaliser rewrites (each character normalised alone) and the
    number of rows holding each. A case-folding normaliser alone (an uncased model) is no
    finding.
    """

    id: ClassVar[str] = "tokens.roundtrip"
    title: ClassVar[str] = "Tokenizer round-trip and stale tokenization"
    cost: ClassVar[Cost] = Cost.STATS
    needs: ClassVar[Needs] = Needs(roles=("tokens",))
    sample_rows: int | None = None  # None: every row
    lossy_warn_above: float = 0.0      # share of rows in 'unk' or 'other'
    lossy_fail_above: float = 0.001
    whitespace_warn_above: float = 0.01
    normaliser_warn_above: float = 0.001  # share of rows the normaliser changes beyond case
    stale_warn_above: float = 0.0
    stale_fail_above: float = 0.001
    max_examples: int = 20

    def __post_init__(self) -> None:
        for name in ("lossy_warn_above", "lossy_fail_above", "whitespace_warn_above",
                     "normaliser_warn_above", "stale_warn_above", "stale_fail_above"):
            v = getattr(self, name)
            if not 0 <= v <= 1:
                raise ValueError(f"{name} must be a share in [0, 1]; got {v!r}")
        if self.sample_rows is not None and self.sample_rows < 1:
            raise ValueError(f"sample_rows must be >= 1; got {self.sample_rows!r}")
        if self.max_examples < 0:
            raise ValueError(f"max_examples must be >= 0; got {self.max_examples!r}")

    def run(self, data: Any) -> list[Finding]:
        return judged(self, data)

    def measure(self, engine: Operations, roles: RunRoles) -> "RoundTripMeasures":
        """Every row (or a seeded sample of ``sample_rows`` per split, the same rows on every
        engine) through :func:`roundtrip_batch` per batch of rows (Spark: on the executors,
        the tokenizer loaded once per Python worker): counts, the candidate evidence rows of
        each ranking, the first stale rows and per rewritten character the rows holding it,
        merged here."""
        from auditor.detectors.token_measures import layout_settings, token_columns

        t = roles.tokens
        if t is None:
            raise NotApplicable("no tokens: section in the config")
        if not t.text:
            raise NotApplicable("no raw text column declared (tokens.text)")
        if t.input_ids:
            tok, settings = layout_settings(engine, t)
        else:  # text only: the round trip of the text; no stored ids to compare
            from auditor.detectors.token_measures import tokenizer_for

            tok, settings = tokenizer_for(engine, t), None
        counts = engine.split_rows()
        results: dict[str, dict[str, Any]] = {}
        chars: dict[str, int] = {}
        for i, name in enumerate(roles.splits):
            sample = None
            if self.sample_rows is not None and counts[name] > self.sample_rows:
                rng = np.random.default_rng([roles.seed, i])
                sample = np.sort(rng.choice(counts[name], self.sample_rows, replace=False))
            fn = partial(roundtrip_batch, check=self, t=t, settings=settings, sample=sample)
            parts = engine.map_batches(token_columns(t) + [t.text], fn, RT_PARTS,
                                       splits=[name])[name]
            results[name] = self._merged(parts, counts[name])
            for ch, n in parts.filter(pl.col("kind") == "char").select("text", "n").iter_rows():
                chars[ch] = chars.get(ch, 0) + int(n)
        return RoundTripMeasures(results=results,
                                 chars=ranked_characters(chars, tok, self.max_examples),
                                 tokens=t, tokenizer=tok)

    def _merged(self, parts: pl.DataFrame, rows: int) -> dict[str, Any]:
        """One split's batches merged: counts summed, the candidate rows of each ranking's
        first ``max_examples`` (of the union of every batch's first ones), the first stale
        rows by row number."""
        def total(name: str) -> int:
            return int(parts.filter((pl.col("kind") == "sum") & (pl.col("name") == name))
                       ["n"].sum())

        cand = parts.filter(pl.col("kind") == "cand")
        kept = [ranked_rows(cand, cats, only, self.max_examples) for cats, only in RANKINGS]
        frame = pl.concat(kept).unique("row").sort("row").select(
            "row", "text", "dec", pl.col("name").alias("cat"), "rewritten")
        stale = parts.filter(pl.col("kind") == "stale").sort("row").head(self.max_examples)
        return {"rows": rows, "drawn": total("drawn"), "checked": total("checked"),
                "frame": frame, "counts": {c: total(c) for c in CATEGORIES},
                "stale": total("stale"), "rewritten": total("rewritten"),
                "stale_examples": [(int(r), list(a or []), list(b or [])) for r, a, b in
                                   stale.select("row", "stored", "encoded").iter_rows()]}

    def judge(self, m: "RoundTripMeasures") -> list[Finding]:
        """The findings from :class:`RoundTripMeasures` (both engines)."""
        tok, results = m.tokenizer, m.results
        return [self._roundtrip_finding(m, tok, results),
                *self._whitespace_finding(m, tok, results),
                *self._normaliser_finding(m, tok, results, m.chars),
                *([self._stale_finding(m, tok, results)] if m.tokens.input_ids else [])]

    def chunk(self, tok: Any, rc: np.ndarray, text: pl.Series, stored: Any, room: int
              ) -> tuple[np.ndarray, np.ndarray, list[Any], pl.DataFrame]:
        """One chunk of rows ``rc`` (their text; ``stored``: the control ids, max_length and
        the rows' stored ids, padding and content length, or None for a text-only corpus):
        one native encode_batch/decode_batch, the category of every row, the stale flags, the
        first ``room`` stale examples and the rows kept as evidence (:meth:`_keep`). Also run
        per Arrow batch on Spark executors."""
        enc_lists = tok.encode_batch(text.to_list())
        dec = pl.Series("dec", tok.decode_batch(enc_lists), dtype=pl.String)
        e_lens = np.fromiter(map(len, enc_lists), dtype=np.int64, count=len(enc_lists))
        enc = Flat(np.fromiter(chain.from_iterable(enc_lists), dtype=np.int64,
                               count=int(e_lens.sum())), e_lens,
                   np.zeros(len(e_lens), dtype=bool))
        unk = (enc.row_sum(enc.values == tok.unk_id) > 0 if tok.unk_id is not None
               else np.zeros(len(rc), dtype=bool))
        frame = pl.DataFrame({"row": rc, "text": text.rename("text"), "dec": dec})
        cat = self._categories(frame, unk, tok)
        if stored is None:
            return cat, np.zeros(len(rc), dtype=bool), [], self._keep(frame, cat)
        specials, max_length, ids, pad_l, content = stored
        bad, s_keep, e_keep = stale_rows(specials, max_length, pad_l, content, Flat.of(ids), enc)
        examples = [(int(rc[j]), s_keep(int(j)), e_keep(int(j)))
                    for j in np.flatnonzero(bad)[:max(0, room)]]
        return cat, bad, examples, self._keep(frame, cat)

    def _keep(self, frame: pl.DataFrame, cat: np.ndarray) -> pl.DataFrame:
        """The rows of a chunk that can become evidence: every lossy, whitespace or rewritten
        row, and of the rows equal only after the normaliser the ``max_examples`` with the
        largest length change (the examples ranking keeps no others)."""
        frame = frame.with_columns(cat=pl.Series(cat.astype(str)))
        norm = cat == "normalised"
        rewritten = np.zeros(len(cat), dtype=bool)
        if norm.any():
            rewritten[norm] = beyond_case(frame.filter(pl.Series(norm)))
        frame = frame.with_columns(rewritten=pl.Series(rewritten))
        plain = norm & ~rewritten
        keep = (cat != "exact") & ~plain
        if plain.any():
            d = frame.select((pl.col("text").str.len_chars()
                              - pl.col("dec").str.len_chars()).abs())[:, 0].to_numpy()
            idx = np.flatnonzero(plain)
            keep[idx[np.argsort(-d[idx], kind="stable")[:self.max_examples]]] = True
        return frame.filter(pl.Series(keep))

    def _categories(self, frame: pl.DataFrame, unk: np.ndarray, tok: Any) -> np.ndarray:
        cat = np.full(frame.height, "exact", dtype=object)
        exact = (frame["text"] == frame["dec"]).fill_null(False).to_numpy()
        rest = np.flatnonzero(~exact)
        if not len(rest):
            return cat
        sub = frame[rest]
        # the tokenizer's normaliser is a per-string call in every backend
        n_text = pl.Series([tok.normalise(s) for s in sub["text"].to_list()], dtype=pl.String)
        n_dec = pl.Series([tok.normalise(s) for s in sub["dec"].to_list()], dtype=pl.String)
        norm = (n_text == n_dec).to_numpy()
        ws = (n_text.str.replace_all(r"\s+", "") == n_dec.str.replace_all(r"\s+", "")).to_numpy()
        cat[rest] = np.where(norm, "normalised", np.where(unk[rest], "unk", np.where(
            ws, "whitespace", "other")))
        return cat

    # -- findings --------------------------------------------------------------------------
    def _sample_note(self, results: dict[str, dict[str, Any]]) -> str:
        sampled = [f"{fmt_count(r['drawn'])} of {fmt_count(r['rows'])} {n} rows"
                   for n, r in results.items() if r["drawn"] < r["rows"]]
        no_text = sum(r["drawn"] - r["checked"] for r in results.values())
        return ((f" (a seeded sample: {', '.join(sampled)})" if sampled else "")
                + (f" ({fmt_count(no_text)} {'row' if no_text == 1 else 'rows'} without text, "
                   "not checked)" if no_text else ""))

    def _roundtrip_finding(self, data: Any, tok: Any,
                           results: dict[str, dict[str, Any]]) -> Finding:
        checked = sum(r["checked"] for r in results.values())
        counts = {c: sum(r["counts"][c] for r in results.values()) for c in CATEGORIES}
        lossy = counts["unk"] + counts["other"]
        per_split = {n: r["counts"]["unk"] + r["counts"]["other"] for n, r in results.items()}
        value = share(lossy, checked)
        sev = grade(value, warn=self.lossy_warn_above, fail=self.lossy_fail_above)
        parts = ", ".join(f"{fmt_count(counts[c])} {LABELS[c]}" for c in CATEGORIES
                          if counts[c])
        if lossy:
            message = (f"{fmt_count(lossy)} of {fmt_count(checked)} rows ({fmt_share(value)}) "
                       f"lose text in decode(encode(text)){by_split_text(per_split)}: {parts}"
                       f"{self._sample_note(results)}")
        else:
            message = (f"All {fmt_count(checked)} checked rows survive decode(encode(text)) "
                       f"up to the tokenizer's normaliser: {parts}{self._sample_note(results)}")
        table = [{"split": n, "checked": r["checked"],
                  **{LABELS[c]: r["counts"][c] for c in CATEGORIES}}
                 for n, r in results.items()]
        evidence: dict[str, Any] = {"by_split": table}
        worst = self._examples(results, ("other", "unk", "whitespace", "normalised"), tok)
        if worst:
            evidence["worst examples"] = worst
        return Finding(severity=sev, metric="roundtrip_loss", subject=data.tokens.text,
                       value=value, threshold=self.lossy_fail_above, count=lossy,
                       splits=[n for n, c in per_split.items() if c] or list(results),
                       message=message, evidence=evidence)

    def _whitespace_finding(self, data: Any, tok: Any,
                            results: dict[str, dict[str, Any]]) -> list[Finding]:
        checked = sum(r["checked"] for r in results.values())
        per_split = {n: r["counts"]["whitespace"] for n, r in results.items()}
        n = sum(per_split.values())
        if not n:
            return []
        value = share(n, checked)
        return [Finding(
            severity=grade(value, warn=self.whitespace_warn_above), metric="roundtrip_whitespace",
            subject=data.tokens.text, value=value, threshold=self.whitespace_warn_above, count=n,
            splits=[k for k, v in per_split.items() if v],
            message=(f"{fmt_count(n)} of {fmt_count(checked)} rows ({fmt_share(value)}) come "
                     f"back from decode(encode(text)) with different whitespace"
                     f"{by_split_text({k: v for k, v in per_split.items() if v})}: harmless "
                     "for prose, destructive for code and tables"),
            evidence={"examples": self._examples(results, ("whitespace",), tok)})]

    def _normaliser_finding(self, data: Any, tok: Any, results: dict[str, dict[str, Any]],
                            chars: list[dict[str, Any]] | None = None) -> list[Finding]:
        checked = sum(r["checked"] for r in results.values())
        per_split = {n: r["rewritten"] for n, r in results.items()}
        n = sum(per_split.values())
        if not n:
            return []
        value = share(n, checked)
        chars = chars or []
        shown = ", ".join(f"{c['character']!r} → {c['becomes']!r}" for c in chars[:5])
        return [Finding(
            severity=grade(value, warn=self.normaliser_warn_above),
            metric="normaliser_rewrites", subject=data.tokens.text, value=value,
            threshold=self.normaliser_warn_above, count=n,
            splits=[k for k, v in per_split.items() if v],
            message=(f"{fmt_count(n)} of {fmt_count(checked)} rows ({fmt_share(value)}) hold "
                     f"characters the tokenizer's normaliser rewrites beyond case and whitespace"
                     f"{by_split_text({k: v for k, v in per_split.items() if v})}"
                     f"{' (' + shown + ')' if shown else ''}: the model never sees them, and "
                     f"decode(encode(text)) does not give them back"
                     f"{self._sample_note(results)}"),
            evidence={"characters": chars,
                      "examples": self._examples(results, ("normalised",), tok,
                                                 only="rewritten")})]

    def _examples(self, results: dict[str, dict[str, Any]], cats: tuple[str, ...],
                  tok: Any, only: str | None = None) -> list[dict[str, Any]]:
        """The rows with the largest length change first, with a character-level diff;
        ``only``: a boolean column of each split's kept frame that rows must also satisfy."""
        picked: list[tuple[int, str, int, str, str, str]] = []
        for name, r in results.items():
            frame = r["frame"]
            keep = frame["cat"].is_in(list(cats)).to_numpy()
            idx = np.flatnonzero(keep & frame[only].to_numpy() if only else keep)
            if not len(idx):
                continue
            sub = frame[idx].with_columns(d=(pl.col("text").str.len_chars()
                                             - pl.col("dec").str.len_chars()).abs())
            rank = {c: i for i, c in enumerate(cats)}
            sub = sub.with_columns(rk=pl.col("cat").replace_strict(rank, return_dtype=pl.Int64))
            for row, text, dec, cat, d, rk in sub.sort(["rk", "d", "row"],  # ties: row order
                                                       descending=[False, True, False]) \
                    .head(self.max_examples).select("row", "text", "dec", "cat", "d", "rk") \
                    .iter_rows():
                picked.append((rk, name, row, text, dec, cat))
        picked.sort(key=lambda p: p[0])
        out = []
        for _, name, row, text, dec, cat in picked[:self.max_examples]:
            if cat not in ("exact", "normalised"):  # show what the normaliser does not explain
                text, dec = tok.normalise(text), tok.normalise(dec)
            out.append({"split": name, "row": row, "category": LABELS[cat],
                        **char_diff(text, dec)})
        return out

    def _stale_finding(self, data: Any, tok: Any,
                       results: dict[str, dict[str, Any]]) -> Finding:
        t = data.tokens
        checked = sum(r["checked"] for r in results.values())
        per_split = {n: r["stale"] for n, r in results.items()}
        n = sum(per_split.values())
        value = share(n, checked)
        sev = grade(value, warn=self.stale_warn_above, fail=self.stale_fail_above)
        if not n:
            return Finding(severity=Severity.INFO, metric="stale_tokenization",
                           subject=t.input_ids, value=0.0, threshold=self.stale_fail_above,
                           count=0, splits=list(results),
                           message=(f"Stored {t.input_ids} equal encode({t.text}) in all "
                                    f"{fmt_count(checked)} checked rows"
                                    f"{self._sample_note(results)}"))
        examples: list[dict[str, Any]] = []
        for name, r in results.items():
            for row, stored, enc in r["stale_examples"][:max(0, self.max_examples
                                                             - len(examples))]:
                examples.append({"split": name, "row": row, **id_diff(stored, enc, tok)})
        return Finding(
            severity=sev, metric="stale_tokenization", subject=t.input_ids, value=value,
            threshold=self.stale_fail_above, count=n,
            splits=[k for k, v in per_split.items() if v],
            message=(f"{fmt_count(n)} of {fmt_count(checked)} rows ({fmt_share(value)}) have "
                     f"stored {t.input_ids} that differ from encode({t.text})"
                     f"{by_split_text({k: v for k, v in per_split.items() if v})}: the data was "
                     "tokenized by another tokenizer or version, or text and ids are misaligned"
                     f"{self._sample_note(results)}"),
            evidence={"examples": examples})


def beyond_case(frame: pl.DataFrame) -> np.ndarray:
    """Rows whose ``text`` and ``dec`` differ after lowercasing and dropping whitespace."""
    squash = [pl.col(c).str.replace_all(r"\s+", "").str.to_lowercase() for c in ("text", "dec")]
    return frame.select(d=(squash[0] != squash[1]).fill_null(False))["d"].to_numpy()


def character_counts(texts: pl.Series, tok: Any) -> dict[str, int]:
    """Per character of ``texts`` that the tokenizer's normaliser, applied to the character
    alone, turns into something else than its lowercase (whitespace ignored), the number of
    texts holding it. One normaliser call per distinct character; non-ASCII characters are
    counted by one group_by over each text's distinct ones, the (rarely rewritten) ASCII ones
    by a literal search each. Sums over disjoint sets of texts add up."""
    per_row = pl.DataFrame({"ch": texts.str.extract_all(r"[^\x00-\x7F]").list.unique()}) \
        .explode("ch").drop_nulls()
    distinct = per_row["ch"].unique().sort().to_list()
    changed = [c for c in distinct if char_rewritten(tok, c)]
    counts = dict(per_row.filter(pl.col("ch").is_in(changed)).group_by("ch").len().iter_rows())
    for c in (chr(i) for i in range(32, 127)):
        if char_rewritten(tok, c):
            counts[c] = int(texts.str.contains(c, literal=True).sum())
    return {str(k): int(v) for k, v in counts.items()}


def char_rewritten(tok: Any, c: str) -> bool:
    """The normaliser turns ``c`` alone into something else than its lowercase."""
    return "".join(tok.normalise(c).split()).lower() != "".join(c.split()).lower()


def ranked_characters(counts: dict[str, int], tok: Any, limit: int) -> list[dict[str, Any]]:
    """Rewritten characters with the number of texts holding each, most frequent first."""
    ranked = sorted(((k, c) for c, k in counts.items() if k), key=lambda p: (-p[0], p[1]))
    return [{"character": c, "code point": f"U+{ord(c[0]):04X}", "becomes": tok.normalise(c),
             "rows": int(k)} for k, c in ranked[:limit]]


def char_diff(a: str, b: str, limit: int = 4000, context: int = 24) -> dict[str, str]:
    """The first differences between text ``a`` and decoded ``b``, with a little context."""
    sm = difflib.SequenceMatcher(None, a[:limit], b[:limit], autojunk=False)
    ops = [op for op in sm.get_opcodes() if op[0] != "equal"]
    if not ops:
        return {"text": short(a), "decoded": short(b), "diff": "(beyond the first "
                f"{limit:,} characters)" if a != b else "(none)"}
    _, i1, _, j1, _ = ops[0]
    changes = "; ".join(f"{tag} {a[i1_:i2_][:20]!r} → {b[j1_:j2_][:20]!r} at {i1_}"
                        for tag, i1_, i2_, j1_, j2_ in ops[:3])
    more = f" (+{len(ops) - 3} more)" if len(ops) > 3 else ""
    return {"text": short(("…" if i1 > context else "") + a[max(0, i1 - context):i1 + 56]),
            "decoded": short(("…" if j1 > context else "") + b[max(0, j1 - context):j1 + 56]),
            "diff": short(changes + more, 200)}


def id_diff(stored: Any, enc: Any, tok: Any, context: int = 3) -> dict[str, Any]:
    """Where stored ids first differ from encode(text), shown as ids and token strings."""
    def as_list(v: Any) -> list[int]:
        if v is None:
            return []
        return v.to_list() if hasattr(v, "to_list") else list(v)

    s, e = as_list(stored), as_list(enc)
    k = next((i for i, (x, y) in enumerate(zip(s, e)) if x != y), min(len(s), len(e)))
    lo = max(0, k - context)

    def view(ids: list[int]) -> str:
        part = ids[lo:k + context + 1]
        strings = tok.token_strings(part)
        return short(" ".join(f"{i}:{t!r}" for i, t in zip(part, strings)), 160)

    return {"first difference at": k, "stored": view(s), "encode(text)": view(e),
            "stored length": len(s), "encoded length": len(e)}


def stale_rows(specials: np.ndarray, max_length: int, pad_l: np.ndarray, content: np.ndarray,
               ids: Flat, enc: Flat) -> tuple[np.ndarray, Any, Any]:
    """Rows whose stored content ids (padding dropped, control tokens removed) are not
    encode(text) with control tokens removed; a row cut at max_length only needs to be a
    prefix. Compared on the flattened ids: lengths first, then element by element over the
    compared prefix, mismatches counted per row with one bincount. Also returns two
    functions giving a row's compared stored and encoded ids (for examples)."""
    s_mask = ids.span(pad_l, pad_l + content) & ~is_special(ids.values, specials)
    e_mask = ~is_special(enc.values, specials)
    sv, ev = ids.values[s_mask], enc.values[e_mask]
    s_len, e_len = ids.row_sum(s_mask), enc.row_sum(e_mask)
    cut = content >= max_length
    ok = ((s_len == e_len) | (cut & (s_len < e_len))) & ~ids.null
    n_cmp = np.where(ok, s_len, 0)
    stored = Flat(sv, s_len, ids.null)
    encoded = Flat(ev, e_len, enc.null)
    a = sv[stored.span(np.zeros(len(pad_l), np.int64), n_cmp)]
    b = ev[encoded.span(np.zeros(len(pad_l), np.int64), n_cmp)]
    if len(a):
        owner = np.repeat(np.arange(len(pad_l)), n_cmp)
        ok &= np.bincount(owner[a != b], minlength=len(pad_l)) == 0

    def s_keep(j: int) -> list[int]:
        return [] if ids.null[j] else \
            sv[stored.offsets[j]:stored.offsets[j] + s_len[j]].tolist()

    def e_keep(j: int) -> list[int]:
        got: list[int] = ev[encoded.offsets[j]:encoded.offsets[j] + e_len[j]].tolist()
        return got

    return ~ok, s_keep, e_keep


def is_special(x: np.ndarray, specials: np.ndarray) -> np.ndarray:
    """``np.isin(x, specials)`` through a lookup table when the control ids are small
    non-negative numbers (the usual case: one gather instead of a sort)."""
    if not len(specials):
        return np.zeros(len(x), dtype=bool)
    top = int(specials.max())
    if specials.min() < 0 or top >= 1 << 26:
        return np.isin(x, specials)
    table = np.zeros(top + 2, dtype=bool)
    table[specials] = True
    return table[np.where((x >= 0) & (x <= top), x, top + 1)]


# ---------------------------------------------------------------------------------------------
# Measuring per batch of rows (every engine)
# ---------------------------------------------------------------------------------------------

# what roundtrip_batch returns: counts (kind "sum"), candidate evidence rows ("cand", the
# category in ``name``), the first stale rows ("stale") and rewritten characters ("char")
RT_PARTS = {"kind": pl.String, "name": pl.String, "row": pl.Int64, "n": pl.Int64,
            "text": pl.String, "dec": pl.String, "d": pl.Int64, "rewritten": pl.Boolean,
            "stored": pl.List(pl.Int64), "encoded": pl.List(pl.Int64)}
# the rankings the findings pick their examples by: categories, and a column rows must hold
RANKINGS: tuple[tuple[tuple[str, ...], str | None], ...] = (
    (("other", "unk", "whitespace", "normalised"), None), (("whitespace",), None),
    (("normalised",), "rewritten"))


def ranked_rows(cand: pl.DataFrame, cats: tuple[str, ...], only: str | None,
                limit: int) -> pl.DataFrame:
    """The first ``limit`` candidate rows of one ranking: category order, then the largest
    length change, then row order (a total order, so the first rows of a union of batches'
    first rows are the first rows overall)."""
    sel = cand.filter(pl.col("name").is_in(list(cats)))
    if only:
        sel = sel.filter(pl.col(only))
    rank = {c: i for i, c in enumerate(cats)}
    return (sel.with_columns(rk=pl.col("name").replace_strict(rank, return_dtype=pl.Int64))
            .sort(["rk", "d", "row"], descending=[False, True, False]).head(limit).drop("rk"))


@dataclass
class RoundTripMeasures:
    """What tokens.roundtrip judges, per split (``results``): rows, drawn, checked, counts by
    category, stale and rewritten counts, the first stale rows (row, stored ids, encoded ids)
    and ``frame``, the candidate evidence rows (row, text, dec, cat, rewritten); ``chars``: the
    rewritten characters ranked. ``tokens`` (the config section) and ``tokenizer`` are the
    run's, not measured."""

    results: dict[str, dict[str, Any]]
    chars: list[dict[str, Any]]
    tokens: Tokens
    tokenizer: Any

    CONTEXT: ClassVar[tuple[str, ...]] = ("tokenizer",)


def roundtrip_batch(batch: pl.DataFrame, first_row: int, *, check: RoundTrip, t: Tokens,
                    settings: Any, sample: np.ndarray | None) -> pl.DataFrame:
    """One batch of rows: the layout (padding and content of each row), then
    :meth:`RoundTrip.chunk` on the drawn rows with a text in slices of ``BATCH`` rows (one
    native encode/decode each), reduced to :data:`RT_PARTS`."""
    from auditor.detectors.token_measures import token_chunk, token_columns
    from auditor.loading.tokenizers import shared_tokenizer

    tok = shared_tokenizer(t.tokenizer)
    n = batch.height
    assert t.text is not None  # measure: NotApplicable without a text column
    texts = batch.get_column(t.text).cast(pl.String)
    rows = np.arange(first_row, first_row + n, dtype=np.int64)
    drawn = np.ones(n, dtype=bool) if sample is None else np.isin(rows, sample)
    if t.input_ids:
        r = settings.roles
        chunk = token_chunk(batch, token_columns(t))
        _, lead, trail, zl, zt = chunk_runs(chunk, t.input_ids, t.attention_mask, r.pad)
        part, _ = chunk_layout(chunk, t, r, (lead, trail, zl, zt), settings.eos_kept,
                               settings.bos_kept, settings.side)
        content = part["length"] - part["pad_left"] - part["pad_right"]
    idx = np.flatnonzero(drawn & texts.is_not_null().to_numpy())
    counts = dict.fromkeys(CATEGORIES, 0)
    stale = rewritten = 0
    kept: list[pl.DataFrame] = []
    examples: list[tuple[int, list[int], list[int]]] = []
    for lo in range(0, len(idx), BATCH):
        at = idx[lo:lo + BATCH]
        stored = (None if not t.input_ids else
                  (r.specials, settings.max_length, chunk[t.input_ids].gather(at),
                   part["pad_left"][at], content[at]))
        cat, bad, ex, keep = check.chunk(tok, rows[at], texts.gather(at), stored,
                                         check.max_examples - len(examples))
        for c in CATEGORIES:
            counts[c] += int((cat == c).sum())
        stale += int(bad.sum())
        rewritten += int(keep["rewritten"].sum())
        examples += ex
        kept.append(keep)
    sums = {**counts, "stale": stale, "rewritten": rewritten, "checked": len(idx),
            "drawn": int(drawn.sum())}
    out = [pl.DataFrame({"kind": ["sum"] * len(sums), "name": list(sums),
                         "n": list(sums.values())})]
    if kept:
        keep = pl.concat(kept).with_columns(
            d=(pl.col("text").str.len_chars() - pl.col("dec").str.len_chars()).abs()
            .cast(pl.Int64), name=pl.col("cat"))
        out += [ranked_rows(keep, cats, only, check.max_examples)
                .select("row", "text", "dec", "d", "rewritten", "name")
                .with_columns(kind=pl.lit("cand")) for cats, only in RANKINGS]
        chars = character_counts(keep.filter("rewritten")["text"], tok) if rewritten else {}
        if chars:
            out.append(pl.DataFrame({"kind": ["char"] * len(chars), "text": list(chars),
                                     "n": list(chars.values())}))
    if examples:
        out.append(pl.DataFrame({"kind": ["stale"] * len(examples),
                                 "row": [e[0] for e in examples],
                                 "stored": [e[1] for e in examples],
                                 "encoded": [e[2] for e in examples]},
                                schema_overrides={"stored": pl.List(pl.Int64),
                                                  "encoded": pl.List(pl.Int64)}))
    from auditor.engines.operations import conform

    return pl.concat([conform(f, RT_PARTS) for f in out])
