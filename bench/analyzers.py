"""Recall and precision of candidate analyzers on a handmade bilingual memory set.

Run: ``python bench/analyzers.py [--verbose] [--build N]``. Prints Markdown tables to stdout
(``--verbose`` lists every candidate's misses on stderr).

The set is data in this file: 100 short personal-memory notes (mostly Chinese, some English,
mixed, Japanese and Korean; the last 50 are everyday distractors that share characters and
words with the queries) and 47 queries with judged relevant notes. Judgments are by topic, as a
person would want them, but only notes in the query's language are judged (a lexical analyzer
cannot match an English note to a Chinese query; that is out of scope here). For every analyzer
and query strategy the script builds a Whoosh index in RAM, runs every query, and reports
recall@5, recall@10, MRR@10, precision@5 (with its ceiling: most queries have one relevant
note) and the mean number of hits. Then, per analyzer, the tokenizer's speed on 1 MB of mixed
text, the time to index N (10k) notes, and the cold start of a new process.

jieba is measured only if it is importable (``pip install jieba``); it is not a dependency.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import math
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from whoosh import fields, qparser
from whoosh.analysis import NgramAnalyzer, StemmingAnalyzer
from whoosh.filedb.filestore import RamStorage
from whoosh.query import And, Or, Query, Term

from vault_tools.index.analysis import BilingualAnalyzer, query_terms, term_query, tokenize

NOTES: dict[str, str] = {
    # health
    "n01": "体检报告出来了，血压偏高，医生建议少吃盐，每周至少运动三次。",
    "n02": "最近睡眠很差，每天凌晨两点才睡着，决定晚上十点以后不看手机。",
    "n03": "我对花生和坚果过敏，吃了会起疹子，外出吃饭一定要提醒服务员。",
    "n04": "女儿对青霉素过敏，带她看病时要先告诉医生。",
    "n05": "Started running 5 km three times a week to improve my health; knees feel fine so far.",
    "n06": "为了身体健康，开始每天早上喝一杯温水，戒掉了含糖饮料。",
    "n07": "牙医说左下智齿需要拔掉，约了下个月15号。",
    "n08": "心理咨询师建议我每天写情绪日记，焦虑的时候做深呼吸。",
    # food
    "n09": "老婆喜欢吃辣，但是不吃香菜；儿子不吃葱。",
    "n10": "周末试做了红烧肉，冰糖要炒到焦糖色，下次少放酱油。",
    "n11": "Allergic to shellfish: avoid shrimp and crab at restaurants.",
    "n12": "公司楼下新开了一家云南米线，酸辣口味很好吃。",
    # trading
    "n13": "交易规则：每笔交易的止损设在买入价下方7%，绝不移动止损。",
    "n14": "今天茅台跌破止损位，按计划卖出，亏损6%，执行纪律比猜底更重要。",
    "n15": "Position sizing rule: never risk more than 1% of the account on one trade; "
    "set the stop-loss before entering.",
    "n16": "复盘：追高买入宁德时代，没有设置止损，结果被套20%。教训：先定止损再下单。",
    "n17": "定投指数基金，每月10号自动扣款2000元，长期持有不看短期波动。",
    "n18": "仓位管理：单只股票不超过总资金的20%，留三成现金。",
    # software and design patterns
    "n19": "学了设计模式里的观察者模式：主题维护订阅者列表，状态变化时通知所有订阅者。",
    "n20": "重构订单模块时用了策略模式，把不同的折扣计算拆成独立的策略类。",
    "n21": "Learned the decorator pattern: wrap an object to add behaviour without changing its class. "
    "Python decorators are related but not the same thing.",
    "n22": "用Python写了一个爬虫脚本，每天抓取汇率数据存进SQLite。",
    "n23": "Decided to use PostgreSQL instead of MongoDB for the billing service because we need transactions.",
    "n24": "代码评审时发现单例模式滥用，导致测试很难隔离，决定改成依赖注入。",
    "n25": "gen-itgc后的数据要先做去重再入库，否则报表会重复计算。",
    # travel
    "n26": "五一去杭州旅游，住在西湖边的民宿，一定要提前两个月订房。",
    "n27": "护照明年三月到期，出国前记得去出入境办理续签。",
    "n28": "Trip to Tokyo in October: booked the hotel near Shinjuku station, bought the JR pass online.",
    "n29": "去云南自驾，大理到丽江的路况很好，高原反应严重的话要带葡萄糖。",
    "n30": "坐飞机容易耳朵疼，起飞前嚼口香糖有用。",
    # work decisions
    "n31": "项目会议决定：新版本推迟到下个月发布，先修复支付模块的bug。",
    "n32": "和老板谈了加薪，他说年底绩效考核后再定。",
    "n33": "团队决定每周五下午不开会，留给深度工作。",
    "n34": "We agreed to move the daily standup to 10:30 because the Shanghai team joins.",
    "n35": "面试了一个后端候选人，算法不错但系统设计偏弱，决定不录用。",
    # family
    "n36": "妈妈的生日是农历八月十五，今年要提前订餐厅。",
    "n37": "儿子的数学老师姓王，家长会在周四晚上七点。",
    "n38": "爸爸的降压药是氨氯地平，每天早上一片，快吃完了要去医院开。",
    "n39": "女儿学钢琴第三年，老师建议明年考四级。",
    "n40": "Mom prefers green tea without sugar; Dad drinks his coffee black.",
    # everything else
    "n41": "家里的猫最近不爱吃猫粮，换了一个牌子。",
    "n42": "车险五月到期，今年换了一家保险公司，便宜了八百元。",
    "n43": "读完《原则》，最有用的是把错误当作学习的机会。",
    "n44": "学日语：東京に行きました means I went to Tokyo.",
    "n45": "한국어 공부 시작: 안녕하세요 is hello.",
    "n46": "家里WiFi路由器在书房，重启要按住背后的按钮十秒。",
    "n47": "健身房教练说深蹲时膝盖不要超过脚尖。",
    "n48": "坚果类零食要放冰箱，不然容易受潮。",
    "n49": "生日聚会上大家玩得很开心，蛋糕是在楼下面包店订的。",
    "n50": "研究了观察者的角度写小说的技巧，模式化的情节很无聊。",
    # distractors: everyday notes that share characters and words with the queries
    "n51": "昨天地铁上发生过一次停电，晚到公司半小时。",
    "n52": "装修设计方案定了北欧风格，客厅刷浅灰色。",
    "n53": "小区禁止在楼道堆放杂物，物业发了通知。",
    "n54": "手机换成省电模式以后续航好了很多。",
    "n55": "女儿的学校下周开运动会，要准备白色运动鞋。",
    "n56": "爸爸退休后每天去公园下象棋。",
    "n57": "妈妈最近在学用智能手机视频通话。",
    "n58": "儿子想养一只仓鼠，答应他期末考好就买。",
    "n59": "老婆的驾照明年到期，需要体检换证。",
    "n60": "护肤品用完了，记得买同款面霜。",
    "n61": "公司年会抽奖抽到了一个电饭煲。",
    "n62": "天气预报说周末有台风，户外活动取消。",
    "n63": "把旧衣服捐给了社区回收站。",
    "n64": "信用卡账单日是每月5号，还款日是23号。",
    "n65": "给车做了保养，换了机油和空调滤芯。",
    "n66": "学生时代的朋友下个月来北京出差，约了吃饭。",
    "n67": "新买的空气净化器噪音有点大，晚上开睡眠模式。",
    "n68": "公司的公积金账户转到新单位了。",
    "n69": "周末带孩子去科技馆，看了恐龙化石展。",
    "n70": "楼下咖啡店的拿铁涨价到32元了。",
    "n71": "The printer on the 3rd floor jams when printing double-sided.",
    "n72": "Renewed the domain name for the family blog until 2028.",
    "n73": "Read an article about sleep hygiene and blue light, not convinced.",
    "n74": "The team lunch on Friday is at the Korean BBQ place.",
    "n75": "Backup script failed last night because the disk was full.",
    "n76": "Need to decide whether to upgrade the laptop or wait for the new model.",
    "n77": "Pattern for sourdough: feed the starter twice a day, bake on Sunday.",
    "n78": "Stop by the pharmacy to pick up vitamin D.",
    "n79": "Hotel loyalty points expire in June; use them for the Shanghai trip.",
    "n80": "Mom's friend recommended a tailor near the station.",
    "n81": "今年的目标是读完二十本书，现在读了七本。",
    "n82": "邻居家的狗晚上一直叫，跟物业反映了。",
    "n83": "电动牙刷的刷头该换了，三个月一换。",
    "n84": "周五晚上和同事聚餐，吃了四川火锅，太辣了。",
    "n85": "学车科目二考过了，下周约科目三。",
    "n86": "记账发现这个月外卖花了一千二，要控制。",
    "n87": "出差报销单要在月底前交给财务。",
    "n88": "过年回老家的火车票要提前十五天抢。",
    "n89": "新同事是从字节跳动跳槽过来的，做推荐算法。",
    "n90": "冰箱里的牛奶过期了，以后买小瓶的。",
    "n91": "阳台的绿萝黄叶了，可能是浇水太多。",
    "n92": "设置了路由器的访客网络，密码贴在冰箱上。",
    "n93": "学习英语每天背三十个单词，用的是不背单词App。",
    "n94": "女儿说想学画画，周六上午有体验课。",
    "n95": "健身计划：周一三五练力量，周二四跑步。",
    "n96": "周报模板改了，要写本周风险和下周计划。",
    "n97": "下单了一个人体工学椅，腰舒服多了。",
    "n98": "股票软件的自选股清理了一遍，只留二十只。",
    "n99": "高铁上信号不好，会议改成晚上开。",
    "n100": "记得给奶奶打电话，她的腿最近又疼了。",
}

# (query, relevant note ids). Judged by topic before any analyzer was run on them.
QUERIES: list[tuple[str, frozenset[str]]] = [
    (q, frozenset(rel.split()))
    for q, rel in [
        ("过敏", "n03 n04"),
        ("花生过敏", "n03"),
        ("健康", "n01 n06"),
        ("止损", "n13 n14 n16"),
        ("我之前学的那个设计模式叫什么", "n19 n20 n24"),
        ("止损设在多少", "n13"),
        ("什么时候续签护照", "n27"),
        ("女儿对什么过敏", "n04"),
        ("爸爸吃的降压药叫什么", "n38"),
        ("billing service 用哪个数据库", "n23"),
        ("用Python写的爬虫", "n22"),
        ("itgc 去重", "n25"),
        ("杭州民宿", "n26"),
        ("高原反应", "n29"),
        ("坐飞机耳朵疼怎么办", "n30"),
        ("妈妈生日", "n36"),
        ("儿子家长会是哪天", "n37"),
        ("老婆不吃什么", "n09"),
        ("红烧肉怎么做", "n10"),
        ("新版本什么时候发布", "n31"),
        ("加薪", "n32"),
        ("猫粮", "n41"),
        ("猫", "n41"),
        ("牙", "n07 n83"),
        ("观察者模式", "n19"),
        ("单例", "n24"),
        ("交易纪律", "n13 n14"),
        ("坚果", "n03 n48"),
        ("睡眠不好", "n02"),
        ("焦虑怎么缓解", "n08"),
        ("基金定投", "n17"),
        ("保险到期", "n42"),
        ("面试结果", "n35"),
        ("不开会", "n33"),
        ("钢琴考级", "n39"),
        ("深蹲膝盖", "n47"),
        ("東京", "n44"),
        ("한국어", "n45"),
        ("what did we decide about the database", "n23"),
        ("stop loss rule", "n15"),
        ("decorator pattern", "n21"),
        ("when is the standup", "n34"),
        ("running for health", "n05"),
        ("shellfish allergy", "n11"),
        ("what tea does mom drink", "n40"),
        ("position sizing", "n15"),
        ("Tokyo hotel", "n28"),
    ]
]

K = 10


def _has_cjk(text: str) -> bool:
    return any("\u3040" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7a3" for ch in text)


# A query strategy: (searcher, schema, query text) -> (ranked note ids, at most K; number of hits).
Strategy = Callable[[Any, Any, str], tuple[list[str], int]]
TermFn = Callable[[str], list[str]]
MakeQuery = Callable[[str], Query]


def plain_term(term: str) -> Query:
    return Term("text", term)


def _run(searcher: Any, query: Query) -> tuple[list[str], int]:
    results = searcher.search(query, limit=K)
    return [hit["id"] for hit in results], len(results)


def parser_strategy(group: Any) -> Strategy:
    """Whoosh's QueryParser on the ``text`` field with the given grouping."""

    def run(searcher: Any, schema: Any, text: str) -> tuple[list[str], int]:
        return _run(searcher, qparser.QueryParser("text", schema, group=group).parse(text))

    return run


def and_strategy(term_fn: TermFn, make: MakeQuery = term_query) -> Strategy:
    def run(searcher: Any, schema: Any, text: str) -> tuple[list[str], int]:
        return _run(searcher, And([make(t) for t in term_fn(text)]))

    return run


def or_strategy(term_fn: TermFn, scale: float | None = 0.9, make: MakeQuery = term_query) -> Strategy:
    def run(searcher: Any, schema: Any, text: str) -> tuple[list[str], int]:
        return _run(searcher, Or([make(t) for t in term_fn(text)], scale=scale))

    return run


def _note_terms(note_id: str) -> set[str]:
    """The index terms of a note, as our analyzer makes them."""
    return {t.text for t in BilingualAnalyzer()(NOTES[note_id], mode="index")}


def msm_strategy(term_fn: TermFn, fraction: float, scale: float | None = 0.9) -> Strategy:
    """OR ranking, keeping only hits that match at least ceil(fraction * n) of the n terms.

    Whoosh's ``Or(minmatch=...)`` is documented as not implemented, so the hits are filtered
    afterwards by the terms their text contains (as the recall module's ``matched_share`` does).
    """

    def run(searcher: Any, schema: Any, text: str) -> tuple[list[str], int]:
        terms = term_fn(text)
        need = max(1, math.ceil(fraction * len(terms)))
        kept = []
        for hit in searcher.search(Or([term_query(t) for t in terms], scale=scale), limit=None):
            have = _note_terms(hit["id"])
            # a one-character term also matches through the bigrams it starts (see term_query)
            count = sum(1 for t in terms if t in have or (len(t) == 1 and any(h[:1] == t for h in have)))
            if count >= need:
                kept.append(hit["id"])
        return kept[:K], len(kept)

    return run


def and_then_or_strategy(term_fn: TermFn, scale: float | None = 0.9) -> Strategy:
    """AND first; if it finds fewer than K notes, fill up with the OR ranking."""

    def run(searcher: Any, schema: Any, text: str) -> tuple[list[str], int]:
        terms = term_fn(text)
        first, hits = _run(searcher, And([term_query(t) for t in terms]))
        if hits >= K:
            return first, hits
        ranked, hits = _run(searcher, Or([term_query(t) for t in terms], scale=scale))
        return (first + [i for i in ranked if i not in first])[:K], hits

    return run


@dataclass(frozen=True)
class Candidate:
    name: str
    analyzer_key: str
    strategy: Strategy


def _jieba_analyzer() -> Any | None:
    try:
        jieba = importlib.import_module("jieba")
        analyse = importlib.import_module("jieba.analyse")
    except ImportError:
        return None
    jieba.setLogLevel(logging.WARNING)
    return analyse.ChineseAnalyzer()


def analyzers() -> dict[str, Callable[[], Any]]:
    found: dict[str, Callable[[], Any]] = {
        "StemmingAnalyzer": StemmingAnalyzer,
        "NgramAnalyzer(2)": lambda: NgramAnalyzer(2),
        "ours": BilingualAnalyzer,
        "ours, unigrams=none": lambda: BilingualAnalyzer(cjk_unigrams="none"),
        "ours, unigrams=all": lambda: BilingualAnalyzer(cjk_unigrams="all"),
    }
    if importlib.util.find_spec("jieba") is not None:
        found["jieba ChineseAnalyzer"] = _jieba_analyzer
    return found


def candidates(available: dict[str, Callable[[], Any]]) -> list[Candidate]:
    and_group = qparser.AndGroup
    or_group = qparser.OrGroup.factory(0.9)
    rows = [
        Candidate("whoosh StemmingAnalyzer, parser AND", "StemmingAnalyzer", parser_strategy(and_group)),
        Candidate("NgramAnalyzer(2), parser AND", "NgramAnalyzer(2)", parser_strategy(and_group)),
        Candidate("NgramAnalyzer(2), parser OR 0.9", "NgramAnalyzer(2)", parser_strategy(or_group)),
    ]
    if "jieba ChineseAnalyzer" in available:
        rows += [
            Candidate(
                "jieba ChineseAnalyzer, parser AND", "jieba ChineseAnalyzer", parser_strategy(and_group)
            ),
            Candidate(
                "jieba ChineseAnalyzer, parser OR 0.9", "jieba ChineseAnalyzer", parser_strategy(or_group)
            ),
        ]
    none, all_ = "ours, unigrams=none", "ours, unigrams=all"
    rows += [
        Candidate(
            "ours unigrams=none, tokenize AND (research row)", none, and_strategy(tokenize, plain_term)
        ),
        Candidate("ours, tokenize AND", "ours", and_strategy(tokenize)),
        Candidate("ours, query_terms AND", "ours", and_strategy(query_terms)),
        Candidate("ours, query_terms AND, then OR 0.9 fill", "ours", and_then_or_strategy(query_terms)),
        Candidate("ours, tokenize OR 0.9", "ours", or_strategy(tokenize)),
        Candidate("ours, query_terms OR (plain BM25 sum)", "ours", or_strategy(query_terms, None)),
        Candidate("**ours, query_terms OR 0.9**", "ours", or_strategy(query_terms)),
        Candidate("ours, query_terms OR 0.9, msm 50%", "ours", msm_strategy(query_terms, 0.5)),
        Candidate("ours, query_terms OR 0.9, msm 67%", "ours", msm_strategy(query_terms, 2 / 3)),
        Candidate(
            "ours unigrams=none, query_terms OR 0.9, Term only",
            none,
            or_strategy(query_terms, 0.9, plain_term),
        ),
        Candidate(
            "ours unigrams=all, query_terms OR 0.9, Term only",
            all_,
            or_strategy(query_terms, 0.9, plain_term),
        ),
    ]
    return rows


def build_index(analyzer: Any, notes: dict[str, str]) -> Any:
    schema = fields.Schema(id=fields.ID(stored=True, unique=True), text=fields.TEXT(analyzer=analyzer))
    index = RamStorage().create_index(schema)
    writer = index.writer()
    for note_id, text in notes.items():
        writer.add_document(id=note_id, text=text)
    writer.commit()
    return index


@dataclass
class Scores:
    r5: float
    r10: float
    mrr: float
    p5: float
    r10_cjk: float
    r10_en: float
    hits: float
    misses: list[str]


def evaluate(index: Any, strategy: Strategy) -> Scores:
    r5: list[float] = []
    r10: list[float] = []
    rr: list[float] = []
    p5: list[float] = []
    cjk: list[float] = []
    en: list[float] = []
    hits: list[int] = []
    misses: list[str] = []
    with index.searcher() as searcher:
        for text, relevant in QUERIES:
            ranked, count = strategy(searcher, index.schema, text)
            hits.append(count)
            hit5 = len(relevant.intersection(ranked[:5]))
            hit10 = len(relevant.intersection(ranked[:10]))
            r5.append(hit5 / len(relevant))
            r10.append(hit10 / len(relevant))
            (cjk if _has_cjk(text) else en).append(hit10 / len(relevant))
            p5.append(hit5 / 5)
            first = next((i for i, note in enumerate(ranked) if note in relevant), None)
            rr.append(0.0 if first is None else 1 / (first + 1))
            if hit10 < len(relevant):
                misses.append(f"{text} -> {ranked[:5]} (want {sorted(relevant)})")
    mean = statistics.fmean
    return Scores(mean(r5), mean(r10), mean(rr), mean(p5), mean(cjk), mean(en), mean(hits), misses)


def mixed_notes(count: int, seed: int = 7) -> list[str]:
    """``count`` notes drawn (deterministically) from the set, each with a time stamp in front."""
    rng = random.Random(seed)
    pool = list(NOTES.values())
    return [f"{rng.randrange(24):02d}:{rng.randrange(60):02d} {rng.choice(pool)}" for _ in range(count)]


def mixed_text(size_bytes: int, seed: int = 7) -> list[str]:
    """Notes as in :func:`mixed_notes`, adding up to ``size_bytes`` of UTF-8."""
    out: list[str] = []
    total = 0
    for note in mixed_notes(size_bytes // 20, seed):
        out.append(note)
        total += len(note.encode())
        if total >= size_bytes:
            break
    return out


def tokenizer_speed(analyzer: Any, texts: list[str], repeat: int = 3) -> tuple[float, float]:
    """(tokens per second, MB per second) over ``texts``, analyzed as the indexer does; best run."""
    analyzer(texts[0], positions=True, chars=True, mode="index")  # warm caches / dictionaries
    best = math.inf
    count = 0
    for _ in range(repeat):
        count = 0
        start = time.perf_counter()
        for text in texts:
            for _ in analyzer(text, positions=True, chars=True, mode="index"):
                count += 1
        best = min(best, time.perf_counter() - start)
    size = sum(len(t.encode()) for t in texts) / 1e6
    return count / best, size / best


def build_seconds(analyzer: Any, texts: list[str], repeat: int = 2) -> float:
    """Seconds to index ``texts`` into a RAM index; best run."""
    notes = {f"d{i}": text for i, text in enumerate(texts)}
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        build_index(analyzer, notes)
        best = min(best, time.perf_counter() - start)
    return best


# What a fresh process runs before its first query can be analyzed.
COLD_START = {
    "StemmingAnalyzer": "from whoosh.analysis import StemmingAnalyzer as A; a = A()",
    "NgramAnalyzer(2)": "from whoosh.analysis import NgramAnalyzer as A; a = A(2)",
    "ours": "from vault_tools.index.analysis import text_analyzer; a = text_analyzer()",
    "ours, unigrams=none": "from vault_tools.index.analysis import BilingualAnalyzer as A; a = A(cjk_unigrams='none')",
    "ours, unigrams=all": "from vault_tools.index.analysis import BilingualAnalyzer as A; a = A(cjk_unigrams='all')",
    "jieba ChineseAnalyzer": "import logging, jieba; jieba.setLogLevel(logging.WARNING)\n"
    "from jieba.analyse import ChineseAnalyzer as A; a = A()",
}


def cold_start_ms(key: str, repeat: int = 3) -> float:
    """Wall time of a new Python process that imports the analyzer and analyzes one query,
    minus that of an empty one (best of ``repeat``)."""
    code = COLD_START[key] + "\nlist(a('我之前学的那个设计模式叫什么 decided', mode='query'))"

    def best(src: str) -> float:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", src], check=True, capture_output=True)
            times.append(time.perf_counter() - start)
        return min(times)

    return (best(code) - best("pass")) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="list the misses of every candidate on stderr")
    parser.add_argument("--build", type=int, default=10_000, metavar="N", help="notes in the build timing")
    args = parser.parse_args(argv)

    available = analyzers()
    n_cjk = sum(1 for q, _ in QUERIES if _has_cjk(q))
    print(
        f"{len(NOTES)} notes, {len(QUERIES)} queries ({n_cjk} Chinese/mixed/kana/hangul, "
        f"{len(QUERIES) - n_cjk} English), top {K}; hits = notes matched per query (mean).\n"
    )
    ceiling = statistics.fmean(min(len(rel), 5) / 5 for _, rel in QUERIES)
    print("| analyzer, query side | R@5 | R@10 | MRR | P@5 | R@10 CJK | R@10 en | hits |")
    print("|---|---|---|---|---|---|---|---|")
    indexes: dict[str, Any] = {}
    for cand in candidates(available):
        if cand.analyzer_key not in indexes:
            indexes[cand.analyzer_key] = build_index(available[cand.analyzer_key](), NOTES)
        s = evaluate(indexes[cand.analyzer_key], cand.strategy)
        print(
            f"| {cand.name} | {s.r5:.2f} | {s.r10:.2f} | {s.mrr:.2f} | {s.p5:.2f} "
            f"| {s.r10_cjk:.2f} | {s.r10_en:.2f} | {s.hits:.1f} |"
        )
        if args.verbose:
            for miss in s.misses:
                print(f"{cand.name}: miss {miss}", file=sys.stderr)
    print(f"| (P@5 ceiling: few notes are relevant per query) | | | | {ceiling:.2f} | | | |")

    texts = mixed_text(1_000_000)
    build_texts = mixed_notes(args.build, seed=11)
    print(
        f"\nTokenizer speed on 1 MB of mixed text ({len(texts)} notes analyzed as for indexing, best of 3);"
    )
    print(f"Whoosh build in RAM of {len(build_texts)} such notes (best of 2); cold start of a new process")
    print("(import + analyze one query, minus an empty interpreter):\n")
    print(f"| analyzer | tokens/s | MB/s | build {len(build_texts):,} notes (s) | cold start (ms) |")
    print("|---|---|---|---|---|")
    for key, factory in available.items():
        analyzer = factory()
        tps, mbps = tokenizer_speed(analyzer, texts)
        build = build_seconds(analyzer, build_texts)
        cold = cold_start_ms(key)
        print(f"| {key} | {tps:,.0f} | {mbps:.2f} | {build:.1f} | {cold:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
