"""Deterministic synthetic vault generator for the benchmarks.

    python bench/genvault.py OUT_DIR --entries 10000 [--seed 7] [--memory-items 2000] [--years 3]
                             [--end 2026-12-01] [--force]

Writes an OpenClaw-layout vault: daily notes ``memory/YYYY-MM-DD.md`` over ``--years`` years ending at
``--end`` and a ``MEMORY.md`` with ``--memory-items`` items under ``## Decisions``, ``## Preferences``,
``## Lessons`` and ``## Facts``. Entries are spread over days (3-30 per daily note; when the entries
do not fit into that many days at 30 a day, every day gets a note and the per-day range is widened),
about 40% English, 30% Chinese and 30% mixed, drawn with Zipf-like frequencies from built-in
vocabularies, with #tags (nested ones too), ``HH:MM`` times, multi-line bullets, todos and paragraphs.
A few notes are ``visibility: shared`` and a few entries ``#private`` / ``#shared``.

Some entries are *probes*: they carry made-up marker words that occur nowhere else in the vault, so
a benchmark can query a marker and know the one entry (file and first line) that must come back.

The same arguments give byte-identical output: everything is drawn from one ``random.Random(seed)``.
Benchmarks import it with ``bench/`` on ``sys.path``::

    from genvault import generate
    vault = generate(tmp / "vault", entries=10_000)
    probe = vault.probes[0]  # Probe(rel_path, line, markers, date, lang)
"""

from __future__ import annotations

import argparse
import bisect
import datetime as dt
import itertools
import math
import random
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

DEFAULT_END = dt.date(2026, 12, 1)
MIN_PER_DAY = 3
MAX_PER_DAY = 30
MEMORY_SECTIONS = (("Decisions", 0.25), ("Preferences", 0.25), ("Lessons", 0.2), ("Facts", 0.3))


def words(text: str) -> list[str]:
    return text.split()


# Ordered roughly by how common a word is: the rank in the list is the Zipf rank.
EN_WORDS = words("""
the to and a of in for with on is it was that we I at this my from be have not but are by about after
before today again all more just new will should need out up so too very still then when now some
atlas billing service database postgres migration deploy release staging production test tests bug fix
review pull request branch merge commit pipeline ingest queue worker cache index query latency api
endpoint schema table invoice customer demo meeting standup sprint retro roadmap ticket issue design
frontend backend react component hook state event bus kafka redis docker kubernetes cluster node memory
cpu disk log logs metric alert oncall incident rollback config secret vpn network timeout retry error
exception stack trace profile flame graph benchmark performance refactor cleanup docs readme runbook
onboarding team manager colleague friend family mother father sister brother partner Maria Tom Jonas Wei
Priya Lena coffee tea lunch dinner breakfast walk run gym climbing bike train flight trip Berlin Shanghai
Hamburg Munich weekend morning evening night week month year plan idea note book chapter reading podcast
movie music weather rain snow cold warm sun park river flat apartment kitchen balcony moving boxes
landlord rent contract bank tax appointment doctor dentist health sleep tired happy busy calm stress
focus habit goal budget savings stock market price shopping groceries bakery restaurant pizza noodles
dumplings curry salad soup bread cheese wine beer water phone laptop keyboard monitor editor vim
terminal shell script python rust golang typescript javascript sql json yaml markdown git github build
package dependency version upgrade library framework model prompt agent llm embedding vector search
recall heartbeat vault whoosh token budget chat fixed wrote read finished started tried decided learned
called met talked asked moved bought cooked watched shipped reviewed merged deployed tested debugged
measured improved broke found lost noticed remembered forgot prefer like hate want love think feel good
bad slow fast big small long short early late easy hard simple clean quick careful better worse first
last next old important useful interesting funny strange quiet noisy cheap expensive warmer colder
tomorrow yesterday tonight later soon maybe probably finally actually really almost never always often
sometimes usually together alone office home cafe library station airport hotel museum concert market
garden window desk chair lamp coat shoes umbrella ticket passport visa letter email slack call video
message reminder deadline estimate scope priority feature release notes changelog hotfix patch regression
flaky timezone locale unicode encoding parser tokenizer analyzer stemmer ranking score importance decay
""")

ZH_WORDS = words("""
的 了 是 在 我 和 也 就 都 要 今天 明天 昨天 这个 那个 一下 一个 还是 已经 因为 所以 但是 如果 然后 终于
突然 还有 可以 需要 应该 觉得 知道 发现 决定 喜欢 开始 结束 完成 继续 准备 讨论 会议 项目 代码 测试 部署
上线 回滚 数据库 服务 接口 性能 缓存 索引 查询 日志 监控 报警 问题 错误 修复 重构 文档 需求 设计 前端
后端 组件 状态 事件 队列 消息 配置 密钥 网络 服务器 容器 集群 版本 升级 依赖 构建 发布 分支 合并 提交
评审 同事 老板 客户 团队 朋友 家人 妈妈 爸爸 姐姐 弟弟 同学 邻居 房东 医生 咖啡 茶 午饭 晚饭 早饭 火锅
面条 饺子 包子 米饭 水果 蔬菜 超市 面包店 餐厅 外卖 散步 跑步 攀岩 骑车 健身 瑜伽 游泳 睡觉 失眠 头疼
感冒 过敏 医院 体检 天气 下雨 下雪 降温 阳光 公园 河边 周末 早上 中午 下午 晚上 周一 周五 上周 下周 这周
月底 年底 春节 中秋 柏林 上海 汉堡 慕尼黑 北京 杭州 机场 火车 飞机 地铁 公交 搬家 新家 阳台 厨房 书桌
台灯 箱子 合同 房租 账单 银行 保险 税务 签证 护照 预约 办公室 电脑 键盘 显示器 手机 耳机 充电器 小说
电影 电视剧 播客 音乐 学习 读书 笔记 总结 复盘 计划 目标 习惯 时间 效率 压力 焦虑 开心 难过 放松 紧张
有趣 无聊 很累 很忙 太慢 很快 简单 麻烦 重要 紧急 记住 教训 经验 想法 建议 意见 答案 原因 结果 方案
成本 预算 价格 投资 股票 基金 止损 收益 风险 模型 提示词 向量 检索 记忆 心跳 分词 中文 英文 翻译 设计模式
观察者 单例 工厂 策略 适配器 算法 排序 哈希 链表 红黑树 事务 隔离级别 快照 主从 分片 副本 一致性 延迟
吞吐 并发 线程 协程 进程 内存泄漏 垃圾回收 编译 解释器 类型 泛型 接口文档 单元测试 集成测试 覆盖率
流水线 镜像 证书 域名 负载均衡 限流 熔断 重试 超时 幂等 回调 订阅 通知 推送 权限 登录 注册 账号 密码
备份 恢复 迁移 脚本 命令行 终端 编辑器 插件 快捷键 主题 字体 深色 浅色 早睡 早起 喝水 运动 体重 跑了
五公里 买了 做了 看了 写了 改了 修了 试了 想了 聊了 见了 去了 回来 出门 在家 远程 加班 请假 休息 旅行
""")

TAGS = words("""
atlas work billing meeting idea todo reading food coffee bug release health family travel people/maria
people/tom work/meeting work/review 技术/前端/React 技术/后端 生活 学习 投资 运动 读书 家人 decision
lesson remember 技术/前端/Vue project/atlas/ingest 工作/会议 mood
""")

EN_HEADINGS = ("Work", "Personal", "Notes", "Ideas", "Reading")
ZH_HEADINGS = ("工作", "生活", "学习", "想法", "读书")
MOODS = ("good", "ok", "tired", "great", "busy", "开心", "一般", "累")
SYLLABLE_C = "bdfgkmnprtvz"
SYLLABLE_V = "aeiou"


class Probe(NamedTuple):
    """An entry that carries marker words found nowhere else in the vault."""

    rel_path: str
    line: int  # 1-based first line of the entry
    markers: tuple[str, ...]
    date: dt.date
    lang: str  # "en", "zh" or "mixed"


@dataclass
class GeneratedVault:
    """What :func:`generate` wrote."""

    out: Path
    seed: int
    start: dt.date
    end: dt.date
    daily_notes: int
    entries: int
    memory_items: int
    shared_notes: int
    private_entries: int
    shared_entries: int
    bytes: int
    seconds: float
    probes: list[Probe] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"genvault: {self.entries:,} entries in {self.daily_notes:,} daily notes "
            f"({self.start}..{self.end}), {self.memory_items:,} MEMORY items, {len(self.probes):,} probes, "
            f"{self.bytes / 1e6:.1f} MB, seed {self.seed}, in {self.seconds:.2f} s -> {self.out}"
        )


class Zipf:
    """Draw words with weight 1/rank^s (fast: cumulative weights + bisect)."""

    def __init__(self, words: Sequence[str], s: float = 1.05) -> None:
        self.words = list(words)
        self.cum = list(itertools.accumulate(1.0 / (rank**s) for rank in range(1, len(words) + 1)))
        self.total = self.cum[-1]

    def draw(self, rng: random.Random, k: int) -> list[str]:
        cum, words, total, hi = self.cum, self.words, self.total, len(self.words) - 1
        return [words[min(bisect.bisect(cum, rng.random() * total), hi)] for _ in range(k)]


EN = Zipf(EN_WORDS)
ZH = Zipf(ZH_WORDS)
TECH = Zipf(EN_WORDS[EN_WORDS.index("atlas") : EN_WORDS.index("Maria")], s=0.8)
TAG_DIST = Zipf(TAGS, s=1.2)


class Writer:
    """Text generation state shared by the daily notes and MEMORY.md."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used_markers: set[str] = set()

    def lang(self) -> str:
        roll = self.rng.random()
        return "en" if roll < 0.4 else "zh" if roll < 0.7 else "mixed"

    def sentence(self, lang: str, markers: Sequence[str] = ()) -> str:
        rng = self.rng
        if lang == "en":
            words = EN.draw(rng, rng.randint(6, 22))
        elif lang == "zh":
            words = ZH.draw(rng, rng.randint(4, 14))
        else:
            words = [
                TECH.draw(rng, 1)[0] if rng.random() < 0.25 else w for w in ZH.draw(rng, rng.randint(4, 14))
            ]
        for marker in markers:
            words.insert(rng.randint(1, len(words)), marker)
        if lang == "en":
            if rng.random() < 0.3:
                cut = rng.randint(2, len(words) - 1)
                words[cut - 1] += ","
            text = " ".join(words)
            return text[0].upper() + text[1:] + ("." if rng.random() < 0.85 else "!")
        return self.join_cjk(words) + ("。" if rng.random() < 0.85 else "！")

    def join_cjk(self, words: list[str]) -> str:
        out: list[str] = []
        prev_ascii = False
        for index, word in enumerate(words):
            is_ascii = word.isascii()
            if index and (is_ascii or prev_ascii):
                out.append(" ")
            elif index and self.rng.random() < 0.12:
                out.append("，")
            out.append(word)
            prev_ascii = is_ascii
        return "".join(out)

    def tags(self) -> list[str]:
        roll = self.rng.random()
        count = 0 if roll < 0.6 else 1 if roll < 0.85 else 2 if roll < 0.96 else 3
        return list(dict.fromkeys(TAG_DIST.draw(self.rng, count)))

    def marker(self) -> str:
        """A made-up word that a stemmer leaves alone and that nothing else in the vault contains."""
        while True:
            body = "".join(self.rng.choice(SYLLABLE_C) + self.rng.choice(SYLLABLE_V) for _ in range(3))
            word = f"zq{body}x"
            if word not in self.used_markers:
                self.used_markers.add(word)
                return word


def day_counts(rng: random.Random, entries: int, total_days: int) -> tuple[list[int], list[int]]:
    """(day offsets that get a note, entries per note), summing exactly to ``entries``."""
    if entries <= 0:
        return [], []
    mid = (MIN_PER_DAY + MAX_PER_DAY) / 2
    n_days = min(total_days, max(1, math.ceil(entries / mid)))
    # the last day (--end) always has a note, so "today"/"yesterday" queries have something to find
    offsets = sorted([*rng.sample(range(total_days - 1), n_days - 1), total_days - 1])
    average = entries / n_days
    lo, hi = MIN_PER_DAY, MAX_PER_DAY
    if average > MAX_PER_DAY:  # more entries than 30 a day can hold: widen the range around the average
        lo, hi = max(MIN_PER_DAY, int(average / 2)), math.ceil(average * 1.5)
    lo = min(lo, entries // n_days)
    counts = [rng.randint(lo, hi) for _ in range(n_days)]
    diff = entries - sum(counts)
    step = 1 if diff > 0 else -1
    while diff:
        index = rng.randrange(n_days)
        if lo <= counts[index] + step <= hi:
            counts[index] += step
            diff -= step
    return offsets, counts


def pick_times(rng: random.Random, count: int) -> list[str]:
    span = range(6 * 60, 24 * 60)
    picked = rng.sample(span, count) if count <= len(span) else [rng.choice(span) for _ in range(count)]
    minutes = sorted(picked)
    return [f"{m // 60:02d}:{m % 60:02d}" for m in minutes]


@dataclass
class DayResult:
    text: str
    probes: list[Probe]
    private: int
    shared: int
    shared_note: bool


def front_matter(w: Writer, day: dt.date, shared_note: bool) -> list[str]:
    lines = ["---", f"date: {day.isoformat()}", "tags: [daily]"]
    if w.rng.random() < 0.3:
        lines.append(f"mood: {w.rng.choice(MOODS)}")
    if shared_note:
        lines.append("visibility: shared")
    lines.append("---")
    if w.rng.random() < 0.5:
        lines += [f"# {day.isoformat()}", ""]
    return lines


def add_entry(w: Writer, lines: list[str], text: str, clock: str, lang: str) -> int:
    """Append one entry (bullet, todo or paragraph) to ``lines``; its 1-based first line."""
    rng = w.rng
    kind = rng.random()
    if kind < 0.03:  # a paragraph entry, blank lines around it
        if lines[-1] != "":
            lines.append("")
        lines += [text, ""]
        return len(lines) - 1
    prefix = "- [ ] " if kind < 0.06 else "- " + (clock + " " if rng.random() < 0.7 else "")
    lines.append(prefix + text)
    start = len(lines)
    if rng.random() < 0.08:
        for _ in range(rng.randint(1, 3)):
            sub = w.sentence(lang if lang != "mixed" else "zh")
            lines.append(("  - " if rng.random() < 0.5 else "  ") + sub)
    return start


def write_day(w: Writer, day: dt.date, count: int, probe_indexes: set[int]) -> DayResult:
    """One daily note with ``count`` entries; the entries at ``probe_indexes`` get marker words."""
    rng = w.rng
    rel_path = f"memory/{day.isoformat()}.md"
    day_lang = w.lang()
    shared_note = rng.random() < 0.03
    lines = front_matter(w, day, shared_note)
    headings = ZH_HEADINGS if day_lang == "zh" else EN_HEADINGS
    n_sections = min(count, rng.choice((1, 1, 2, 2, 3)))
    cuts = sorted(rng.sample(range(1, count), n_sections - 1)) if n_sections > 1 else []
    section_starts = {0, *cuts}
    section_names = iter(rng.sample(headings, n_sections))
    times = iter(pick_times(rng, count))
    probes: list[Probe] = []
    private = shared = 0
    for index in range(count):
        if index in section_starts:
            if lines[-1] != "":
                lines.append("")
            lines += [f"## {next(section_names)}", ""]
        lang = day_lang if rng.random() < 0.7 else w.lang()
        markers = (w.marker(), w.marker()) if index in probe_indexes else ()
        text = w.sentence(lang, markers)
        tags = w.tags()
        roll = rng.random()
        if roll < 0.01:
            tags.append("private")
        elif roll < 0.02:
            tags.append("shared")
        private += "private" in tags
        shared += "private" not in tags and (shared_note or "shared" in tags)
        if tags:
            text += " " + " ".join("#" + tag for tag in tags)
        start = add_entry(w, lines, text, next(times), lang)
        if markers:
            probes.append(Probe(rel_path, start, markers, day, lang))
    while lines[-1] == "":
        lines.pop()
    return DayResult("\n".join(lines) + "\n", probes, private, shared, shared_note)


def write_memory(
    w: Writer, items: int, note_days: list[dt.date], end: dt.date, probe_every: int
) -> tuple[str, list[Probe]]:
    rng = w.rng
    note_days = note_days or [end]
    lines = [
        "---",
        "title: Long-term memory",
        "type: memory",
        "# generated by bench/genvault.py",
        f"updated: {end.isoformat()}",
        "---",
        "# Long-term memory",
    ]
    used_ids: set[str] = set()
    probes: list[Probe] = []
    remaining = items
    item_no = 0
    for position, (section, share) in enumerate(MEMORY_SECTIONS):
        count = remaining if position == len(MEMORY_SECTIONS) - 1 else round(items * share)
        count = min(count, remaining)
        remaining -= count
        lines += ["", f"## {section}", ""]
        days = sorted(rng.choice(note_days) for _ in range(count))
        for day in days:
            item_no += 1
            lang = w.lang()
            is_probe = probe_every > 0 and item_no % probe_every == 0
            markers = (w.marker(), w.marker()) if is_probe else ()
            text = w.sentence(lang, markers)
            while True:
                block_id = f"m-{rng.getrandbits(24):06x}"
                if block_id not in used_ids:
                    used_ids.add(block_id)
                    break
            fields = f"[importance:: {rng.randint(3, 10) / 10:.1f}]"
            if rng.random() < 0.05:
                fields += f" [expires:: {(day + dt.timedelta(days=rng.randint(14, 400))).isoformat()}]"
            lines.append(f"- {day.isoformat()}: {text} {fields} [source:: [[{day.isoformat()}]]] ^{block_id}")
            if markers:
                probes.append(Probe("MEMORY.md", len(lines), markers, day, lang))
    return "\n".join(lines) + "\n", probes


def prepare_out(out: Path, force: bool) -> None:
    if out.exists() and any(out.iterdir()):
        if not force:
            raise FileExistsError(f"{out} is not empty (use force=True / --force to regenerate into it)")
        shutil.rmtree(out / "memory", ignore_errors=True)
        (out / "MEMORY.md").unlink(missing_ok=True)
    (out / "memory").mkdir(parents=True, exist_ok=True)


def generate(
    out: Path,
    entries: int,
    seed: int = 7,
    memory_items: int = 2000,
    years: int = 3,
    end: dt.date = DEFAULT_END,
    *,
    probes: int | None = None,
    force: bool = False,
) -> GeneratedVault:
    """Write a synthetic vault into ``out`` (new or empty unless ``force``); same arguments, same bytes.

    ``probes`` is how many daily entries carry marker words (default: 1 in 100, at least 1, at most
    1000); MEMORY.md gets one probe item per 100 items as well.
    """
    started = time.perf_counter()
    out = Path(out)
    prepare_out(out, force)
    rng = random.Random(seed)
    w = Writer(rng)
    start = end - dt.timedelta(days=max(1, round(365.25 * years)) - 1)
    total_days = (end - start).days + 1
    offsets, counts = day_counts(rng, entries, total_days)
    n_probes = min(entries, probes if probes is not None else min(1000, max(1, entries // 100)))
    probe_set = set(rng.sample(range(entries), n_probes)) if entries else set()
    result = GeneratedVault(out, seed, start, end, len(offsets), entries, memory_items, 0, 0, 0, 0, 0.0)
    first = 0
    note_days: list[dt.date] = []
    for offset, count in zip(offsets, counts, strict=True):
        day = start + dt.timedelta(days=offset)
        note_days.append(day)
        local = {i - first for i in range(first, first + count) if i in probe_set}
        day_result = write_day(w, day, count, local)
        first += count
        data = day_result.text.encode("utf-8")
        (out / "memory" / f"{day.isoformat()}.md").write_bytes(data)
        result.bytes += len(data)
        result.probes += day_result.probes
        result.private_entries += day_result.private
        result.shared_entries += day_result.shared
        result.shared_notes += day_result.shared_note
    if memory_items > 0:
        text, memory_probes = write_memory(w, memory_items, note_days, end, 100 if memory_items >= 100 else 0)
        data = text.encode("utf-8")
        (out / "MEMORY.md").write_bytes(data)
        result.bytes += len(data)
        result.probes += memory_probes
    result.seconds = time.perf_counter() - started
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("out", type=Path, help="folder to write the vault into (new or empty)")
    parser.add_argument("--entries", type=int, default=10_000, help="daily-note entries (default 10000)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--memory-items", type=int, default=2000)
    parser.add_argument("--years", type=int, default=3)
    parser.add_argument("--end", type=dt.date.fromisoformat, default=DEFAULT_END, help="last day, YYYY-MM-DD")
    parser.add_argument("--probes", type=int, default=None, help="daily entries with marker words")
    parser.add_argument(
        "--force", action="store_true", help="regenerate memory/ and MEMORY.md in a used folder"
    )
    args = parser.parse_args(argv)
    if args.entries < 0 or args.memory_items < 0 or args.years < 1:
        parser.error("--entries and --memory-items must be >= 0, --years >= 1")
    try:
        vault = generate(
            args.out,
            args.entries,
            args.seed,
            args.memory_items,
            args.years,
            args.end,
            probes=args.probes,
            force=args.force,
        )
    except FileExistsError as exc:
        print(f"genvault: {exc}", file=sys.stderr)
        return 2
    print(vault.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
