"""A fixed, offline text corpus for measuring token estimators (bench only, CPython).

Each category is a list of samples. Prose, code and JSON come partly from the Python
standard library installed here; non-Latin text was written for this corpus; ids and
emoji are generated from a seeded generator so every run measures the same text.
"""

from __future__ import annotations

import base64
import hashlib
import inspect
import json
import random

PROSE = [
    "The quick brown fox jumps over the lazy dog. It was a bright cold day in April, and the "
    "clocks were striking thirteen. Nobody in the office noticed; they were too busy arguing "
    "about the quarterly budget and whether the new espresso machine counted as equipment.",
    "Context windows are finite, and every token spent on stale history is a token not spent on "
    "the question at hand. A good runtime keeps the request, the direction of the session and the "
    "evidence that matters, and lets the rest fall away without pretending it never existed.",
    "Please summarize the attached report, focusing on revenue growth in the European market, "
    "the risks our auditors flagged in section 4.2, and any changes to headcount since March.",
    "I'm not sure I understand: didn't we agree last week that the migration would wait until "
    "after the release? If that's changed, who decided, and why wasn't the team told?",
    "Dear customer, thank you for your patience. Your order #48213 has shipped and should arrive "
    "within 3-5 business days. Track it at any time from your account page.",
]

NON_LATIN = {
    "cyrillic": [
        "Привет! Сегодня мы обсудим, как устроена память агента и почему контекст нужно сжимать.",
        "Москва — столица России, крупнейший по численности населения город страны и Европы.",
        "Пожалуйста, проверьте отчёт и сообщите, если найдёте ошибки в расчётах за третий квартал.",
    ],
    "arabic": [
        "مرحبا بكم في اجتماعنا اليوم. سنناقش خطة العمل للربع القادم وميزانية المشروع الجديد.",
        "اللغة العربية من أكثر اللغات انتشارا في العالم، ويتحدث بها أكثر من أربعمائة مليون شخص.",
        "من فضلك أرسل لي التقرير النهائي قبل نهاية الأسبوع حتى نتمكن من مراجعته مع الفريق.",
    ],
    "devanagari": [
        "नमस्ते! आज हम इस परियोजना की प्रगति और अगले चरण की योजना पर चर्चा करेंगे।",
        "भारत एक विशाल देश है जिसमें अनेक भाषाएँ, धर्म और संस्कृतियाँ एक साथ रहती हैं।",
        "कृपया रिपोर्ट की जाँच करें और यदि कोई त्रुटि मिले तो मुझे तुरंत बताएं।",
    ],
    "cjk": [
        "你好！今天我们讨论一下代理运行时的上下文压缩，以及为什么必须严格控制令牌预算。",
        "東京は日本の首都であり、世界でも有数の大都市です。毎日多くの人々が電車で通勤しています。",
        "안녕하세요. 오늘 회의에서는 다음 분기의 예산과 "
        "새로운 프로젝트 일정에 대해 논의하겠습니다.",
        "请在周五之前把最终报告发给我，我们需要和团队一起审阅。谢谢！",
        "このメッセージは自動的に送信されました。返信しないでください。",
    ],
}

EMOJI = [
    "Great job team 🎉🎉🚀 see you tomorrow 👋😀",
    "👨‍👩‍👧‍👦 family, 🇺🇸🇯🇵🇩🇪 flags, 👍🏽 thumbs, ❤️‍🔥 heart on fire",
    "😀😃😄😁😆😅🤣😂🙂🙃😉😊😇🥰😍🤩😘😗☺️😚😙",
]


def _code_samples() -> list[str]:
    import collections
    import json.decoder
    import textwrap

    out = []
    for obj in (textwrap.wrap, textwrap.TextWrapper, json.decoder.JSONDecoder, collections.Counter):
        src = inspect.getsource(obj)
        out.extend(src[i : i + 1500] for i in range(0, min(len(src), 6000), 1500))
    out.append("function add(a, b) {\n  return a + b;\n}\nconst xs = [1, 2].map((x) => x * 2);\n")
    return out


def _json_samples() -> list[str]:
    rng = random.Random(7)
    out = []
    for i in range(8):
        record = {
            "id": f"evt-{i:04d}",
            "type": rng.choice(["tool_result", "message", "approval"]),
            "status": rng.choice(["ok", "error", "pending"]),
            "temperature": round(rng.uniform(-20, 40), 2),
            "tags": rng.sample(["weather", "sales", "infra", "billing", "search"], 3),
            "nested": {"count": rng.randint(0, 10_000), "enabled": rng.random() < 0.5},
        }
        out.append(json.dumps(record, indent=2 if i % 2 else None))
    return out


def _id_samples() -> list[str]:
    rng = random.Random(11)
    out = []
    for i in range(12):
        raw = bytes(rng.getrandbits(8) for _ in range(24))
        out.append(
            f"request {hashlib.sha256(raw).hexdigest()} "
            f"token {base64.b64encode(raw).decode()} "
            f"uuid {raw[:16].hex()[:8]}-{raw[:16].hex()[8:12]}-{raw[:16].hex()[12:16]} n={i * 7919}"
        )
    return out


def corpus() -> dict[str, list[str]]:
    """The corpus by category, in a fixed order."""
    cats: dict[str, list[str]] = {"prose": PROSE, "code": _code_samples(), "json": _json_samples()}
    cats.update(NON_LATIN)
    cats["emoji"] = EMOJI
    cats["ids"] = _id_samples()
    return cats
