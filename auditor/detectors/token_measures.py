"""The token layout measured once for every engine: ``tokens.lengths`` and
``tokens.special_tokens`` read it through
:meth:`~auditor.engines.operations.Operations.map_batches`.

Three passes over the token columns, each a module-level function of a batch of rows that runs
the numpy layout code of :mod:`auditor.detectors.token_layout` (on polars in this process, on
Spark on the executors) and returns mergeable partials in one long table (:data:`PARTS`),
summed by the engine:

0. (only with an attention mask and no pad id) the ids under the mask's zeros: the pad id is
   the id under at least 90% of every zero of every split;
1. the pad-run statistics :func:`~auditor.detectors.token_layout.learn_kept` decides from
   (whether the first pad token of a run is a real EOS/BOS), the padding sides and the longest
   row: the layout's settings;
2. the per-row layout of every batch reduced to what the checks judge: sums, the table of
   content lengths, content-token counts, per test the rows flagged and counted among, the
   first ``limit`` flagged rows per batch with a short view of each (lengths and the first and
   last ids), the id range of the token columns, and special-token strings typed in the text.

Merging takes sums of sums, the smallest and largest of per-batch extremes and the first
``limit`` rows by row number, so nothing depends on where an engine cuts its batches.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np
import polars as pl

from auditor.core.config import Tokens
from auditor.core.roles import ColumnType, Roles as RunRoles
from auditor.detectors.token_findings import RowProblem, ids_text, short
from auditor.detectors.token_layout import (AMBIGUOUS, MISALIGNED, NO_LABELS, Flat, Roles,
                                            aligned, _as_list, chunk_layout, chunk_runs,
                                            kept_stats, learn_kept)
from auditor.engines.operations import Operations
from auditor.errors import NotApplicable

# the long table every pass returns; rows equal in every column but ``n`` are summed
PARTS = {"kind": pl.String, "name": pl.String, "key": pl.Int64, "row": pl.Int64,
         "text": pl.String, "n": pl.Int64}
SUM_BY = ("kind", "name", "key", "row", "text")
SHIFT_KEYS = (0, 1, 2, NO_LABELS, AMBIGUOUS, MISALIGNED)
VIEW_IDS = 8  # ids shown at either end of an example row
VIEW_FIELDS = ("length", "content", "pad_left", "pad_right")


def token_columns(t: Tokens) -> list[str]:
    return [c for c in (t.input_ids, t.attention_mask, t.labels) if c]


def token_chunk(batch: pl.DataFrame, columns: list[str]) -> pl.DataFrame:
    """A batch's token columns as lists of Int64 (or booleans for a mask), fixed-size arrays
    included (:func:`~auditor.detectors.token_layout._as_list`)."""
    return batch.select([_as_list(batch.schema[c], c) for c in columns])


def _parts(kind: str, *, name: Any = None, key: Any = None, row: Any = None, text: Any = None,
           n: Any = 1) -> pl.DataFrame:
    """Partial rows of one kind; every argument a scalar or a list of one length."""
    cols = {"name": name, "key": key, "row": row, "text": text, "n": n}
    size = max((len(v) for v in cols.values() if isinstance(v, (list, np.ndarray))), default=1)
    data = {"kind": [kind] * size}
    for c, v in cols.items():
        data[c] = list(v) if isinstance(v, (list, np.ndarray)) else [v] * size
    return pl.DataFrame(data, schema=PARTS)


# ---------------------------------------------------------------------------------------------
# Pass 0 and 1: the settings
# ---------------------------------------------------------------------------------------------

def pad_votes(batch: pl.DataFrame, first_row: int, *, ids: str, mask: str) -> pl.DataFrame:
    """Pass 0: how many attention-mask zeros lie under each id (rows whose mask has the ids'
    length), and the zeros in all."""
    chunk = token_chunk(batch, [ids, mask])
    ok = aligned(chunk, ids, mask)
    if not ok.any():
        return _parts("zeros", n=0)
    sub = chunk.filter(pl.Series(ok))
    under = Flat.of(sub[ids]).values[Flat.of(sub[mask]).values == 0]
    values, counts = np.unique(under, return_counts=True)
    return pl.concat([_parts("zeros", n=len(under)),
                      _parts("under", key=values.astype(np.int64), n=counts.astype(np.int64))])


def run_stats(batch: pl.DataFrame, first_row: int, *, t: Tokens, pad: int | None
              ) -> pl.DataFrame:
    """Pass 1: :func:`~auditor.detectors.token_layout.kept_stats` of the trailing (EOS) and
    leading (BOS) pad runs, the rows padded on either side under both kept settings, and the
    longest row; the two smallest-run statistics as keys (merged by min)."""
    chunk = token_chunk(batch, token_columns(t))
    lens, lead, trail, zl, zt = chunk_runs(chunk, ids_of(t), t.attention_mask, pad)
    full = lead >= lens
    sums: dict[str, int] = {"right0": int(((trail > 0) & ~full).sum()),
                            "right1": int(((trail - 1 > 0) & ~full).sum()),
                            "left0": int(((lead > 0) & ~full).sum()),
                            "left1": int(((lead - 1 > 0) & ~full).sum())}
    mins: dict[str, int] = {}
    for what, st in (("eos", kept_stats(trail, zt, lens)), ("bos", kept_stats(lead, zl, lens))):
        for k in ("rows", "voted", "voted_kept", "with_run", "run_one"):
            sums[f"{what}_{k}"] = st[k]
        if st["with_run"]:
            mins[f"{what}_with_run_min"] = st["with_run_min"]
        if st["rows"]:
            mins[f"{what}_run_min"] = st["run_min"]
    return pl.concat([_parts("sum", name=list(sums), n=list(sums.values())),
                      _parts("min", name=list(mins), key=list(mins.values())),
                      _parts("maxlen", key=int(lens.max()) if len(lens) else 0)])


@dataclass(frozen=True)
class Settings:
    """What the layout learned from the data (see :mod:`~auditor.detectors.token_layout`)."""

    roles: Roles
    side: str                 # right | left | none (dominant padding side)
    eos_kept: bool
    bos_kept: bool
    how: str                  # one sentence on how padding was told from content
    max_length: int           # declared max_length, else the longest stored row
    max_length_declared: bool


def _total(parts: dict[str, pl.DataFrame], kind: str) -> pl.DataFrame:
    """The partials of ``kind`` over every split, summed by (name, key)."""
    frames = [p.filter(pl.col("kind") == kind) for p in parts.values()]
    return (pl.concat(frames).group_by("name", "key").agg(pl.col("n").sum())
            if frames else pl.DataFrame(schema=PARTS))


def settings_of(engine: Operations, t: Tokens, roles: Roles) -> Settings:
    """Passes 0 and 1 (see the module docstring)."""
    inferred = ""
    if roles.pad is None and t.attention_mask:
        parts = engine.map_batches([ids_of(t), t.attention_mask],
                                   partial(pad_votes, ids=ids_of(t), mask=t.attention_mask),
                                   PARTS, sum_by=SUM_BY)
        zeros = int(_total(parts, "zeros")["n"].sum())
        under = _total(parts, "under").sort("n", "key", descending=[True, False])
        if zeros and under.height:
            pad, n = int(under["key"][0]), int(under["n"][0])
            if n >= 0.9 * zeros and pad >= 0:
                roles = replace(roles, pad=pad)
                inferred = (f"No pad id declared and none in the tokenizer: {pad} is taken as "
                            "the pad id, as the id under most attention-mask zeros.")
    parts = engine.map_batches(token_columns(t), partial(run_stats, t=t, pad=roles.pad), PARTS,
                               sum_by=SUM_BY)
    sums = {str(k): int(v) for k, v in _total(parts, "sum").select("name", "n").iter_rows()}
    mins = _total(parts, "min").group_by("name").agg(pl.col("key").min())
    low = {str(k): int(v) for k, v in mins.iter_rows()}
    maxlen: Any = _total(parts, "maxlen")["key"].max()

    def stats(what: str) -> dict[str, int]:
        st = {k: sums.get(f"{what}_{k}", 0)
              for k in ("rows", "voted", "voted_kept", "with_run", "run_one")}
        st["with_run_min"] = low.get(f"{what}_with_run_min", 0)
        st["run_min"] = low.get(f"{what}_run_min", 0)
        return st

    eos_kept, how_e = learn_kept(roles.pad is not None and roles.pad == roles.eos,
                                 stats("eos"), "EOS", "trailing")
    bos_kept, how_b = learn_kept(roles.pad is not None and roles.pad == roles.bos,
                                 stats("bos"), "BOS", "leading")
    right = sums.get("right1" if eos_kept else "right0", 0)
    left = sums.get("left1" if bos_kept else "left0", 0)
    side = "none" if right == left == 0 else ("right" if right >= left else "left")
    how = " ".join(x for x in (
        inferred, "No pad id: every token is content." if roles.pad is None else
        f"Padding = runs of pad id {roles.pad} at the row ends.", how_e, how_b) if x)
    return Settings(roles=roles, side=side, eos_kept=eos_kept, bos_kept=bos_kept, how=how,
                    max_length=int(t.max_length or (maxlen if maxlen is not None else 0)),
                    max_length_declared=t.max_length is not None)


# ---------------------------------------------------------------------------------------------
# Pass 2: the layout reduced
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LayoutSpec:
    """Everything pass 2 needs, shipped to Spark's executors with the function."""

    t: Tokens
    settings: Settings
    limit: int                       # flagged rows kept per test and batch
    injection: dict[str, int] = field(default_factory=dict)  # special-token strings -> id


def _tests(spec: LayoutSpec) -> dict[str, tuple[pl.Expr, pl.Expr | None]]:
    """Per test: the rows it flags and the rows it counts among (None: every row), as polars
    expressions over the per-row layout frame."""
    t, st = spec.t, spec.settings
    r = st.roles
    c = pl.col
    content, first, last = c("content"), c("first"), c("last")
    nonempty = content > 0
    trunc = content >= st.max_length
    uncut = nonempty & ~trunc
    tests: dict[str, tuple[pl.Expr, pl.Expr | None]] = {
        "trunc": (trunc, None), "oov": (c("oov") > 0, None)}
    if r.eos is not None:
        tests["cut"] = (trunc & (last != r.eos), None)
    if t.labels:
        tests["labels_oov"] = (c("labels_oov") > 0, None)
        tests["labels"] = ((c("labels_on_pad") > 0) | ~c("labels_aligned"), None)
        tests["shift"] = (c("shift").is_in([t.label_shift, AMBIGUOUS, NO_LABELS]).not_(),
                          c("shift") != NO_LABELS)
    if t.attention_mask:
        kinds = [c("mask_on_pad") > 0, c("mask_off_content") > 0, c("mask_bad") > 0,
                 ~c("mask_aligned")]
        for i, cond in enumerate(kinds):
            tests[f"mask{i}"] = (cond, None)
        tests["mask"] = (pl.any_horizontal(kinds), None)
    for role, col, rid, base in (("bos", first, r.bos, nonempty), ("eos", last, r.eos, uncut)):
        if rid is not None:
            tests[f"{role}_has"] = (col == rid, base)
            tests[f"{role}_lacks"] = (col != rid, base)
    left = (c("pad_left") > 0) & nonempty
    right = (c("pad_right") > 0) & nonempty
    tests["left"] = (left, left | right)
    tests["right"] = (right, left | right)
    specials = [int(x) for x in r.specials if 0 <= x < r.vocab_size]
    only_special = ((content <= 2) & first.is_in(specials) & last.is_in(specials)) if specials \
        else pl.lit(False)
    tests["empty"] = ((content == 0) | only_special, None)
    if r.unk is not None:
        tests["unk"] = (c("unk") > 0, None)
    return tests


def layout_parts(batch: pl.DataFrame, first_row: int, *, spec: LayoutSpec) -> pl.DataFrame:
    """Pass 2 over one batch (see the module docstring)."""
    t, st = spec.t, spec.settings
    r = st.roles
    cols = token_columns(t)
    chunk = token_chunk(batch, cols)
    n = chunk.height
    lens, lead, trail, zl, zt = chunk_runs(chunk, ids_of(t), t.attention_mask, r.pad)
    part, counts = chunk_layout(chunk, t, r, (lead, trail, zl, zt), st.eos_kept, st.bos_kept,
                                st.side)
    inside = part.pop("specials_inside")
    rows = np.arange(first_row, first_row + n, dtype=np.int64)
    lay = pl.DataFrame({"row": rows, **{k: v for k, v in part.items()}}).with_columns(
        content=pl.col("length") - pl.col("pad_left") - pl.col("pad_right"))
    c = pl.col
    nonempty = c("content") > 0
    uncut = nonempty & (c("content") < st.max_length)
    sums = [pl.len().alias("rows"), nonempty.sum().alias("nonempty"),
            uncut.sum().alias("uncut"),
            ((c("pad_left") + c("pad_right")) > 0).sum().alias("padded"),
            c("content").sum().alias("content"), c("unk").sum().alias("unk")]
    if r.bos is not None:
        sums.append((nonempty & (c("first") == r.bos)).sum().alias("bos"))
    if r.eos is not None:
        sums.append((uncut & (c("last") == r.eos)).sum().alias("eos"))
    if t.labels:
        sums += [(c("shift") == k).sum().alias(f"shift{k}") for k in SHIFT_KEYS]
    tests = _tests(spec)
    for name, (flag, among) in tests.items():
        if among is None:
            sums += [flag.sum().alias(f"hits:{name}"), pl.len().alias(f"among:{name}")]
        else:
            sums += [(flag & among).sum().alias(f"hits:{name}"),
                     among.sum().alias(f"among:{name}")]
    total = lay.select(sums).row(0, named=True)
    out = [_parts("sum", name=[k for k in total if ":" not in k],
                  n=[int(v) for k, v in total.items() if ":" not in k])]
    for kind in ("hits", "among"):
        names = [k for k in total if k.startswith(kind + ":")]
        out.append(_parts(kind, name=[k.split(":", 1)[1] for k in names],
                          n=[int(total[k]) for k in names]))
    picked: set[int] = set()
    for name, (flag, among) in tests.items():
        if not total[f"hits:{name}"] or not spec.limit:
            continue
        base = among if among is not None else pl.lit(True)
        got = lay.filter(flag & base).get_column("row").head(spec.limit).to_numpy()
        picked.update(got.tolist())
        out.append(_parts("row", name=name, row=got))
    lengths = lay.group_by("content").len()
    out.append(_parts("len", key=lengths["content"].to_numpy(),
                      n=lengths["len"].to_numpy().astype(np.int64)))
    nz = np.flatnonzero(counts[:r.vocab_size])
    out.append(_parts("tok", key=nz.astype(np.int64), n=counts[nz].astype(np.int64)))
    out.append(_parts("maxlen", key=int(lens.max()) if n else 0))
    for col in cols:
        if col == t.attention_mask:
            continue
        f = Flat.of(chunk[col])
        v = f.values[f.values != t.ignore_index] if col == t.labels else f.values
        if len(v):
            out.append(_parts("idmin", name=col, key=int(v.min())))
            out.append(_parts("idmax", name=col, key=int(v.max())))
    if picked:
        out.append(_views(chunk, lay, sorted(picked), first_row, cols))
    if t.text and spec.injection:
        out.append(_injection(batch, t.text, inside, first_row, spec))
    return pl.concat(out)


def _views(chunk: pl.DataFrame, lay: pl.DataFrame, rows: list[int], first_row: int,
           cols: list[str]) -> pl.DataFrame:
    """Example rows' lengths and padding, and the first and last ids of each token column."""
    at = np.asarray(rows, dtype=np.int64) - first_row
    sub = lay[at]
    frames = [_parts("view", name=f, row=sub["row"].to_numpy(), n=sub[f].to_numpy())
              for f in VIEW_FIELDS]
    picked = chunk[at]
    for col in cols:
        values = picked[col].to_list()
        for tail in (False, True):
            frames.append(_parts("ids", name=f"{col}|{'last' if tail else 'first'}",
                                 row=sub["row"].to_numpy(),
                                 text=[ids_text(v, VIEW_IDS, tail=tail) for v in values]))
    return pl.concat(frames)


def _injection(batch: pl.DataFrame, text: str, inside: pl.DataFrame, first_row: int,
               spec: LayoutSpec) -> pl.DataFrame:
    """Rows holding special-token strings typed in the text that were encoded as control ids:
    the flagged rows counted, and the first ``limit`` hits (row, token, id, snippet)."""
    texts = batch.select(pl.col(text).cast(pl.String).alias("t"))
    hits = injection_hits(texts, spec.injection, inside)
    out = [_parts("hits", name="injection", n=hits["row"].n_unique() if hits.height else 0),
           _parts("among", name="injection", n=batch.height)]
    head = hits.head(spec.limit)
    if head.height:
        ex = [injection_example("", int(r) + first_row, s, int(i), texts["t"][int(r)] or "")
              for r, s, i in head.select("row", "tok", "id").iter_rows()]
        out.append(_parts("inj", row=[e["row"] for e in ex], name=[e["token"] for e in ex],
                          key=[e["id"] for e in ex], text=[e["text"] for e in ex]))
    return pl.concat(out)


# ---------------------------------------------------------------------------------------------
# Special-token strings typed in text
# ---------------------------------------------------------------------------------------------

def injection_strings(tok: Any) -> dict[str, int]:
    """The tokenizer's special-token strings worth searching for in text (2+ characters)."""
    return {s: i for s, i in tok.special_tokens.items() if len(s.strip()) >= 2}


def injection_hits(texts: pl.DataFrame, strings: dict[str, int],
                   inside: pl.DataFrame) -> pl.DataFrame:
    """(row, tok, id) of rows of ``texts`` (one column ``t``) holding a special-token string
    whose id was also encoded inside the content (``inside``: (row, id) of control ids there),
    sorted by row and token. Also run per Arrow batch on Spark executors."""
    patterns = sorted(strings, key=len, reverse=True)
    ids = pl.DataFrame({"tok": list(strings), "id": list(strings.values())},
                       schema={"tok": pl.String, "id": pl.Int64})
    hits = (texts.with_row_index("row")
            .filter(pl.col("t").str.contains_any(patterns))
            .select(pl.col("row").cast(pl.Int64),
                    tok=pl.col("t").str.extract_many(patterns, leftmost=True))
            .explode("tok").drop_nulls("tok").unique(["row", "tok"])
            .join(ids, on="tok"))
    return hits.join(inside.select(pl.col("row").cast(pl.Int64), pl.col("id").cast(pl.Int64))
                     .unique(), on=["row", "id"], how="inner").sort("row", "tok")


def injection_example(split: str, row: int, s: str, i: int, text: str) -> dict[str, Any]:
    at = text.find(s)
    return {"split": split, "row": row, "token": s, "id": i,
            "text": short(text[max(0, at - 30):at + len(s) + 30])}


# ---------------------------------------------------------------------------------------------
# The merged measures
# ---------------------------------------------------------------------------------------------

@dataclass
class TokenLayout:
    """Pass 2 merged: per split its sums, hits and among-counts per test, the first ``limit``
    flagged rows per test, the content-length table, content-token counts, the longest row;
    ``views`` the example rows' short views; ``id_range`` per token column; ``injection``
    the first hits."""

    settings: Settings
    splits: list[str]
    sums: dict[str, dict[str, int]]
    hits: dict[str, dict[str, int]]
    among: dict[str, dict[str, int]]
    rows: dict[str, dict[str, np.ndarray]]
    lengths: dict[str, tuple[np.ndarray, np.ndarray]]
    token_counts: dict[str, np.ndarray]
    longest: dict[str, int]
    views: dict[tuple[str, int], dict[str, Any]]
    id_range: dict[str, str]
    injection: list[dict[str, Any]]

    def problem(self, test: str) -> RowProblem:
        """The rows ``test`` flags, per split (``rows``: the first ``limit``)."""
        return RowProblem({s: self.hits[s].get(test, 0) for s in self.splits},
                          {s: self.among[s].get(test, 0) for s in self.splits},
                          {s: self.rows[s].get(test, np.zeros(0, np.int64))
                           for s in self.splits})

    def total(self, name: str) -> int:
        return sum(self.sums[s].get(name, 0) for s in self.splits)


def _merge(settings: Settings, parts: dict[str, pl.DataFrame], vocab_size: int,
           limit: int) -> TokenLayout:
    sums, hits, among, rows, lengths, counts, longest = {}, {}, {}, {}, {}, {}, {}
    views: dict[tuple[str, int], dict[str, Any]] = {}
    ends: dict[str, list[int]] = {}
    injection: list[dict[str, Any]] = []
    for split, p in parts.items():
        by = p.partition_by("kind", as_dict=True)

        def of(kind: str) -> pl.DataFrame:
            return by.get((kind,), pl.DataFrame(schema=PARTS))

        def named(kind: str) -> dict[str, int]:
            return {str(k): int(v) for k, v in of(kind).group_by("name")
                    .agg(pl.col("n").sum()).iter_rows()}

        sums[split], hits[split], among[split] = named("sum"), named("hits"), named("among")
        rows[split] = {str(k): np.sort(np.asarray(v, dtype=np.int64))[:limit]
                       for k, v in of("row").group_by("name").agg(pl.col("row")).iter_rows()}
        table = of("len").group_by("key").agg(pl.col("n").sum()).sort("key")
        lengths[split] = (table["key"].to_numpy().astype(np.int64),
                          table["n"].to_numpy().astype(np.int64))
        tok = of("tok").group_by("key").agg(pl.col("n").sum())
        c = np.zeros(vocab_size, dtype=np.int64)
        c[tok["key"].to_numpy()] = tok["n"].to_numpy()
        counts[split] = c
        m: Any = of("maxlen")["key"].max()
        longest[split] = int(m) if m is not None and sums[split].get("rows") else 0
        for kind in ("idmin", "idmax"):
            for name, key in of(kind).select("name", "key").iter_rows():
                ends.setdefault(str(name), []).append(int(key))
        kept = {int(r) for got in rows[split].values() for r in got}  # batch-independent
        for f, r, v in of("view").select("name", "row", "n").iter_rows():
            if int(r) in kept:
                views.setdefault((split, int(r)), {})[str(f)] = int(v)
        for f, r, text in of("ids").select("name", "row", "text").iter_rows():
            if int(r) in kept:
                views.setdefault((split, int(r)), {})[str(f)] = text
        room = max(0, limit - len(injection))
        inj = of("inj").sort("row", "name").head(room)
        injection += [{"split": split, "row": int(r), "token": s, "id": int(i), "text": x}
                      for r, s, i, x in inj.select("row", "name", "key", "text").iter_rows()]
    id_range = {c: f"{min(v)} … {max(v)}" for c, v in ends.items()}
    return TokenLayout(settings=settings, splits=list(parts), sums=sums, hits=hits, among=among,
                       rows=rows, lengths=lengths, token_counts=counts, longest=longest,
                       views=views, id_range=id_range, injection=injection)


def tokenizer_for(engine: Operations, t: Tokens) -> Any:
    """The run's tokenizer adapter, loaded once per run."""
    from auditor.loading.tokenizers import shared_tokenizer

    return engine.cached(("tokens.tokenizer", t.tokenizer),
                         lambda: shared_tokenizer(t.tokenizer))


def ids_of(t: Tokens) -> str:
    """The stored token ids' column; a text-only tokens: section (``input_ids: null``) has
    none, and a check reading stored ids is not applicable."""
    if not t.input_ids:
        raise NotApplicable("a text-only tokens: section (input_ids: null): there are no stored "
                            "token ids to check")
    return t.input_ids


def layout_settings(engine: Operations, t: Tokens, vocab_size: int | None = None
                    ) -> tuple[Any, Settings]:
    """The run's tokenizer and the layout settings it and the data give (passes 0 and 1),
    each computed once per run (per ``vocab_size``)."""
    from auditor.detectors.token_layout import roles_from

    tok = tokenizer_for(engine, t)
    lr = roles_from(t, tok, vocab_size)
    settings: Settings = engine.cached(("tokens.settings", lr.vocab_size),
                                       lambda: settings_of(engine, t, lr))
    return tok, settings


def token_layout(engine: Operations, roles: RunRoles, *, vocab_size: int | None = None,
                 limit: int = 20) -> TokenLayout:
    """The merged layout (three passes at most), computed once per run for each
    (``vocab_size``, ``limit``): ``vocab_size`` the model's embedding rows when not the
    tokenizer's; ``limit`` the flagged rows kept per test and split."""
    t = roles.tokens
    if t is None:
        raise NotApplicable("no tokens: section in the config")
    kind = roles.types.get(ids_of(t))
    if kind is not None and kind != ColumnType.NESTED:
        raise NotApplicable(f"{t.input_ids!r} is {kind}, not a list of token ids")

    def build() -> TokenLayout:
        tok, settings = layout_settings(engine, t, vocab_size)
        lr = settings.roles
        spec = LayoutSpec(t=t, settings=settings, limit=limit,
                          injection=injection_strings(tok) if t.text else {})
        columns = token_columns(t) + ([t.text] if t.text and spec.injection else [])
        parts = engine.map_batches(columns, partial(layout_parts, spec=spec), PARTS,
                                   sum_by=SUM_BY)
        return _merge(settings, parts, lr.vocab_size, limit)

    made: TokenLayout = engine.cached(("tokens.layout", vocab_size, limit), build)
    return made
