"""The tokenizer port: the estimator errs high, the exact counter is o200k."""

from __future__ import annotations

import pytest

from agrun.context import EstimatingTokenizer, Tokenizer, build_context, default_tokenizer
from agrun.context._tokens import estimate_raw

SAMPLES = {
    "prose": "The quick brown fox jumps over the lazy dog. It was a bright cold day in April.",
    "code": "def total(xs):\n    return sum(x.amount for x in xs if x.currency == 'EUR')\n",
    "json": '{"id": "evt-0001", "status": "ok", "temperature": -7.12, "tags": ["a", "b"]}',
    "cyrillic": "Пожалуйста, проверьте отчёт и сообщите, если найдёте ошибки в расчётах.",
    "arabic": "من فضلك أرسل لي التقرير النهائي قبل نهاية الأسبوع حتى نتمكن من مراجعته.",
    "devanagari": "कृपया रिपोर्ट की जाँच करें और यदि कोई त्रुटि मिले तो मुझे तुरंत बताएं।",
    "cjk": "请在周五之前把最终报告发给我，我们需要和团队一起审阅。東京は日本の首都です。",
    "emoji": "Great job team 🎉🎉🚀 👨‍👩‍👧‍👦 🇺🇸 👍🏽",
    "ids": "sha 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 [REDACTED]",
}


def test_the_default_is_the_estimator_and_satisfies_the_port() -> None:
    tokenizer = default_tokenizer()
    assert isinstance(tokenizer, EstimatingTokenizer)
    assert isinstance(tokenizer, Tokenizer)
    assert tokenizer.count("") == 0


def test_margin_is_applied_on_top_and_must_not_be_negative() -> None:
    text = SAMPLES["prose"]
    assert EstimatingTokenizer(margin=0.5).count(text) >= 1.5 * estimate_raw(text)
    assert EstimatingTokenizer(margin=0.0).count(text) == estimate_raw(text)
    with pytest.raises(ValueError, match="margin"):
        EstimatingTokenizer(margin=-0.1)


def test_estimate_grows_with_text() -> None:
    one = estimate_raw("hello world ")
    assert estimate_raw("hello world " * 10) >= 9 * one


def test_a_host_tokenizer_is_used_for_every_count() -> None:
    class CharCounter:
        name = "chars"

        def count(self, text: str) -> int:
            return len(text)

    pack = build_context(
        {"messages": [{"id": "u", "role": "user", "content": "hi"}], "budget": {"limit": 100}},
        tokenizer=CharCounter(),
    )
    assert pack.compression_metadata.tokenizer == "chars"
    assert pack.budget_used == len(pack.render())


@pytest.mark.cpython_only
@pytest.mark.parametrize("category", sorted(SAMPLES))
def test_estimator_errs_high_against_o200k(category: str) -> None:
    from agrun.context import ExactTokenizer

    exact = ExactTokenizer("o200k_base")
    text = SAMPLES[category]
    assert default_tokenizer().count(text) >= exact.count(text)


@pytest.mark.cpython_only
def test_exact_tokenizer_counts_like_tiktoken() -> None:
    from agrun.context import ExactTokenizer

    assert ExactTokenizer("cl100k_base").count("hello world") == 2
    assert ExactTokenizer().count("hello world") == 2
    with pytest.raises(ValueError, match="unknown encoding"):
        ExactTokenizer("nope")


@pytest.mark.cpython_only
def test_with_the_exact_tokenizer_the_budget_is_exact() -> None:
    from agrun.context import ExactTokenizer

    exact = ExactTokenizer()
    window = [
        {"id": f"m{i}", "role": "user", "content": SAMPLES[name]}
        for i, name in enumerate(sorted(SAMPLES))
    ]
    pack = build_context({"messages": window, "budget": {"limit": 150}}, tokenizer=exact)
    assert pack.compression_metadata.tokenizer == "o200k_base"
    assert exact.count(pack.render()) <= pack.budget_used <= 150
