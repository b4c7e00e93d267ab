"""MinHash/LSH: estimates track exact Jaccard; edited copies are found, unrelated texts not."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from auditor.stats.minhash import jaccard, near_duplicate_pairs, shingle_hashes, signatures

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi "
         "rho sigma tau upsilon phi chi psi omega").split()


def _doc(rng, n=60):
    return " ".join(rng.choice(WORDS, n))


def test_shingles_are_word_trigrams_and_short_docs_are_one_shingle():
    sh = shingle_hashes(pl.Series(["a b c d", "Hello,  WORLD", None, ""]), k=3)
    assert sh.group_by("doc").len().sort("doc").rows() == [(0, 2), (1, 1)]
    assert jaccard("a b c d", "A b, c d") == 1.0
    assert jaccard("a b c d", "a b c e") == pytest.approx(1 / 3)


def test_signature_estimate_tracks_exact_jaccard():
    rng = np.random.default_rng(0)
    base = [_doc(rng) for _ in range(30)]
    edited = [" ".join(d.split()[: 60 - 2 * i]) + " " + _doc(rng, 2 * i) for i, d in
              enumerate(base)]
    sa = signatures(pl.Series(base), num_perm=256)
    sb = signatures(pl.Series(edited), num_perm=256)
    est = (sa.values == sb.values).mean(1)
    exact = np.array([jaccard(a, b) for a, b in zip(base, edited)])
    assert np.abs(est - exact).max() < 0.12
    assert np.corrcoef(est, exact)[0, 1] > 0.97


def test_lsh_finds_lightly_edited_copies_only():
    rng = np.random.default_rng(1)
    train = [_doc(rng, 80) for _ in range(500)]
    test = [_doc(rng, 80) for _ in range(200)]
    for i in range(10):  # 10 copies with one word replaced
        words = train[i * 7].split()
        words[40] = "CHANGED"
        test[i * 3] = " ".join(words)
    pairs = near_duplicate_pairs(signatures(pl.Series(train)), signatures(pl.Series(test)),
                                 threshold=0.8)
    assert pairs["doc_b"].to_list() == [i * 3 for i in range(10)]
    assert pairs["doc_a"].to_list() == [i * 7 for i in range(10)]
    assert (pairs["jaccard"] >= 0.8).all()


def test_empty_documents_never_match():
    sa = signatures(pl.Series(["", None, "some words here"]))
    sb = signatures(pl.Series(["", None]))
    assert sa.empty.tolist() == [True, True, False]
    assert near_duplicate_pairs(sa, sb).height == 0


# -- scripts written without spaces: character shingles ---------------------------------------

# Real Chinese product and restaurant reviews (written for this test); EDITS are the same
# reviews with one or two characters changed, as a copy-edited review would be.
REVIEWS_ZH = [
    "这家餐厅的服务非常周到，菜品新鲜而且分量很足，价格也算合理，周末来吃饭需要提前预订座位，下次还会带朋友再来。",
    "手机收到了，外观和图片上一模一样，运行速度很快，电池续航能力也不错，就是充电器发热有点严重，总体还是满意的。",
    "酒店位置很方便，离地铁站只有五分钟的路程，房间干净整洁，但是隔音效果比较差，晚上能听到走廊里的说话声。",
    "这本书的故事情节非常吸引人，作者的文笔细腻流畅，人物形象刻画得很生动，我一口气就把它读完了，强烈推荐。",
    "快递速度太慢了，等了整整一个星期才到货，包装盒也被压坏了，客服的态度还算可以，答应给我补发一个新的。",
    "电影的特效做得很震撼，但是剧情有些拖沓，中间部分让人昏昏欲睡，演员的表演倒是可圈可点，值得一看。",
    "这款洗发水的味道很清香，用完以后头发柔顺不打结，就是价格比超市贵了一点，等打折的时候再多囤几瓶。",
    "老师讲课很有耐心，每个知识点都会举例子说明，作业批改得也很认真，孩子上了一个学期成绩提高了不少。",
]
EDITS_ZH = {
    0: REVIEWS_ZH[0].replace("非常周到", "十分周到"),
    2: REVIEWS_ZH[2].replace("五分钟", "十分钟"),
    5: REVIEWS_ZH[5].replace("值得一看", "值得一看！"),
    7: REVIEWS_ZH[7].replace("提高", "提升"),
}
UNRELATED_ZH = [
    "今天天气晴朗，我们一家人去公园野餐，孩子们在草地上放风筝，玩得非常开心，傍晚才依依不舍地回家。",
    "这台洗衣机噪音很小，洗得也很干净，安装师傅上门很及时，只是说明书写得不够清楚，研究了半天才会用。",
]


def _char_trigrams(text: str) -> set[tuple[str, ...]]:
    import re
    import unicodedata

    from auditor.stats.textnorm import WORD_PY

    w = re.findall(WORD_PY, unicodedata.normalize("NFKC", text).lower())
    return {tuple(w[i:i + 3]) for i in range(len(w) - 2)} if len(w) >= 3 else {tuple(w)}


def test_chinese_text_is_shingled_by_characters_and_jaccard_equals_a_set_reference():
    # one \w+ run per clause: before, a review was 5-6 "words" and a one-character edit cost
    # a third of its shingles; character trigrams keep it above 0.8
    for i, edited in EDITS_ZH.items():
        a, b = _char_trigrams(REVIEWS_ZH[i]), _char_trigrams(edited)
        assert len(a) >= 40
        assert jaccard(REVIEWS_ZH[i], edited) == pytest.approx(len(a & b) / len(a | b))
        assert jaccard(REVIEWS_ZH[i], edited) >= 0.8
    for u in UNRELATED_ZH:
        assert max(jaccard(r, u) for r in REVIEWS_ZH) < 0.1
    # mixed text: Latin words stay words, Han characters are words of their own
    sh = shingle_hashes(pl.Series(["iPhone 15 的电池", "a b"]), k=3)
    assert sh.group_by("doc").len().sort("doc").rows() == [(0, 3), (1, 1)]


def test_lsh_finds_edited_chinese_reviews_and_not_unrelated_ones():
    test = [EDITS_ZH[i] for i in sorted(EDITS_ZH)] + UNRELATED_ZH
    pairs = near_duplicate_pairs(signatures(pl.Series(REVIEWS_ZH)), signatures(pl.Series(test)),
                                 threshold=0.8)
    assert pairs["doc_b"].to_list() == [0, 1, 2, 3]
    assert pairs["doc_a"].to_list() == sorted(EDITS_ZH)


def test_leakage_duplicates_finds_edited_chinese_reviews_as_near_copies():
    from auditor.core.config import Columns
    from auditor.loading.data import build_audit_data
    from auditor.detectors.duplicates import Duplicates

    stars = [5, 4, 3, 5, 2, 3, 4, 5]
    train = pl.DataFrame({"review": REVIEWS_ZH, "stars": stars})
    test = pl.DataFrame({"review": [EDITS_ZH[i] for i in sorted(EDITS_ZH)] + UNRELATED_ZH,
                         "stars": [stars[i] for i in sorted(EDITS_ZH)] + [5, 3]})
    data = build_audit_data({"train": train, "test": test}, columns=Columns(text=["review"]))
    (near,) = [f for f in Duplicates().run(data) if f.metric == "near_duplicate_rows"]
    assert (near.count, near.subject, near.splits) == (4, "", ["train", "test"])
    assert [(e["train_row"], e["test_row"]) for e in near.evidence["examples"]] == [
        (0, 0), (2, 1), (5, 2), (7, 3)]
