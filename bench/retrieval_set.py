"""A judged retrieval test set for ``recall``: planted facts, questions about them, and the answers.

The vault is a generated background (``bench/genvault.py``: two years of Zipf-distributed
English/Chinese/mixed chatter sharing much of the facts' vocabulary: deploy, database, 会议,
攀岩 ...) with the hand-written facts below planted into daily notes and MEMORY.md. Each query
names the facts that answer it (judged by topic when the facts were written, before any ranking
was run). A fact written both in a daily note and in MEMORY.md is one *group*: a query finds it
when either place is among the top k (or in a hit's ``also_in``).

"Today" is :data:`AS_OF` (Tuesday 2026-12-01): last week is 2026-11-23..29, yesterday 11-30,
前天 11-29, last month/上个月 November, 三月 March 2026.

Slices (a query may be in several): ``en``/``zh`` by the query's language, ``time`` (time words in
the question), ``question`` (a natural-language question) or ``keyword`` (a few words), ``tag``
(a ``#tag``/``tag:`` in the query), ``dup`` (the answer exists in two places), ``late`` (the answer
was written down a day or more after the period the question names).

    from retrieval_set import build, QUERIES
    built = build(tmp / "vault")          # writes the vault, returns fact -> places
    for q in QUERIES: q.text, q.facts, q.slices
"""

from __future__ import annotations

import datetime as dt
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

AS_OF = dt.date(2026, 12, 1)
BACKGROUND_ENTRIES = 6000
BACKGROUND_YEARS = 2


@dataclass(frozen=True)
class Fact:
    id: str
    date: str  # ISO day of the daily note; MEMORY items: the item's date
    text: str
    memory: str | None = None  # the same fact as a MEMORY.md item (a near-duplicate)
    importance: float | None = None  # for the MEMORY item
    only_memory: bool = False  # no daily entry: the fact lives in MEMORY.md only
    time: str | None = None  # HH:MM prefix in the daily note
    extra: tuple[str, ...] = ()  # more lines of the same day about it: one group with the fact


@dataclass(frozen=True)
class Query:
    text: str
    facts: tuple[str, ...]
    slices: frozenset[str]


def F(
    id: str,
    date: str,
    text: str,
    memory: str | None = None,
    importance: float | None = None,
    only_memory: bool = False,
    time: str | None = None,
    extra: tuple[str, ...] = (),
) -> Fact:
    return Fact(id, date, text, memory, importance, only_memory, time, extra)


# ---------------------------------------------------------------------------------------------
# Facts

FACTS: list[Fact] = [
    # --- work, English
    F(
        "w01",
        "2026-11-25",
        "Decided: Atlas auth moves to OIDC with Keycloak; we drop the home-grown JWT sessions. #decision #atlas",
        memory="Atlas auth uses OIDC with Keycloak instead of home-grown JWT sessions",
        importance=0.8,
        time="11:00",
    ),
    F(
        "w02",
        "2026-09-14",
        "Auth discussion with Jonas: Auth0 is too expensive, Keycloak needs ops work. No decision on auth yet. #atlas",
    ),
    F(
        "w03",
        "2026-03-12",
        "Chose Qdrant as the vector database for semantic search in Atlas; pgvector was too slow at 10M rows. #decision #atlas",
        memory="Chose Qdrant as the vector database for semantic search (pgvector too slow at 10M rows)",
        importance=0.8,
    ),
    F(
        "w04",
        "2026-05-06",
        "Postmortem: the ingest queue stalled because the Redis maxmemory policy evicted our locks. Set maxmemory-policy to noeviction. #incident #atlas",
    ),
    F(
        "w05",
        "2026-10-20",
        "Kafka consumer lag alert fired at 3am; root cause was a rebalance storm after the deploy. Raised session.timeout.ms to 45s. #incident",
        time="09:10",
    ),
    F(
        "w06",
        "2026-08-11",
        "Lena's code review tip: keep pull requests under 300 lines, they get merged twice as fast. #lesson",
    ),
    F(
        "w07",
        "2026-07-02",
        "The staging cluster runs Kubernetes 1.29 on three Hetzner nodes; production runs on five. #atlas",
    ),
    F(
        "w08",
        "2026-04-15",
        "Billing: invoices are generated on the 1st of each month by a cron job at 02:00 UTC. #billing",
    ),
    F(
        "w09",
        "2026-06-18",
        "Rate limit for the public API: 100 requests per minute per token, burst 20, enforced in the gateway. #atlas #api",
    ),
    F(
        "w10",
        "2026-11-27",
        "Rolled back release 0.8.3: the search endpoint returned 500s for Chinese queries. #release #atlas",
        time="16:40",
    ),
    F(
        "w11",
        "2026-02-10",
        "Atlas reports errors to Sentry; the DSN is stored in Vault under secret/atlas/sentry. #atlas",
    ),
    F(
        "w12",
        "2026-01-20",
        "Moved CI from Jenkins to GitHub Actions; the build went from 14 to 6 minutes. #atlas",
    ),
    F(
        "w13",
        "2026-09-30",
        "Priya suggested feature flags with Unleash for dark launches. We agreed to try it in Q4. #decision",
    ),
    F(
        "w14",
        "2026-10-08",
        "Load test: the recall endpoint handles 800 rps at p95 120 ms on one pod. #benchmark #atlas",
    ),
    F(
        "w15",
        "2026-11-24",
        "Hamburg demo prep: the CSV export must use semicolons because German Excel expects them. #hamburg",
        time="14:00",
    ),
    F(
        "w16",
        "2026-05-28",
        "Tom is the product owner of the mobile app; ask him before changing any onboarding screen. #people/tom",
    ),
    F(
        "w17",
        "2026-03-25",
        "Switched frontend state management from Redux to Zustand: much less boilerplate. #技术/前端/React",
    ),
    F(
        "w18",
        "2026-06-03",
        "Sprint retro: too many meetings on Wednesdays, so sprint planning moves to Monday mornings. #retro",
    ),
    F(
        "w19",
        "2026-11-30",
        "The tenants table migration finished overnight: 42 million rows, no downtime. #atlas",
        time="08:30",
    ),
    F("w20", "2026-11-18", "Dry run of the tenants table migration took 6 hours on the scratch copy. #atlas"),
    F(
        "w21",
        "2026-10-22",
        "Decided to keep the monorepo; splitting the billing service out is not worth the CI cost. #decision #billing",
    ),
    F(
        "w22",
        "2026-07-21",
        "Onboarding doc for new backend hires lives in Notion under Engineering / Start here. #atlas",
    ),
    F(
        "w23",
        "2026-11-19",
        "Budget review with Jonas: cloud spend must drop 20% in 2027, mostly by rightsizing staging. #atlas",
    ),
    # --- personal, English
    F(
        "p01",
        "2026-04-03",
        "Maria started going to the Berlin Boulders climbing gym, Thursdays after work. #people/maria",
    ),
    F("p02", "2026-04-17", "Climbing with Maria again; she finished her first 6a route. #people/maria"),
    F(
        "p03",
        "2026-11-30",
        "Maria's birthday party last night was great: karaoke until 2am, she turned 32. #people/maria",
        time="09:15",
    ),
    F(
        "p04",
        "2026-06-20",
        "Bought a birthday present for Tom: a Moka pot and good coffee beans. #people/tom",
    ),
    F(
        "p05",
        "2026-02-14",
        "Dentist Dr. Krüger says the left molar needs a crown; appointment booked for March 3rd. #health",
    ),
    F("p06", "2026-03-03", "Got the crown at the dentist: 480 euros, insurance pays half. #health"),
    F(
        "p07",
        "2026-07-19",
        "Flight to Shanghai booked for September 12: Lufthansa via Frankfurt, seat 34A. #travel",
    ),
    F("p08", "2026-09-13", "Landed in Shanghai; Mum made braised pork for dinner. #travel #family"),
    F(
        "p09",
        "2026-05-09",
        "The landlord raises the rent to 1,240 euros from July; the contract allows it once a year. #moving",
    ),
    F(
        "p10",
        "2026-10-25",
        "Started re-reading Designing Data-Intensive Applications, chapter 5 on replication. #reading",
    ),
    F(
        "p11",
        "2026-08-02",
        "Allergic reaction after the Thai curry: probably the peanuts. Avoid peanut sauce. #health",
        memory="Allergic to peanuts: avoid peanut sauce and satay",
        importance=0.9,
    ),
    F(
        "p12",
        "2026-01-05",
        "New year's resolution: run 5 km three times a week and sleep before midnight. #goal",
    ),
    F("p13", "2026-11-28", "Ran the Tiergarten 10k race in 52 minutes, a personal best! #运动", time="11:30"),
    F("p14", "2026-10-03", "Ran 10k along the Spree in 55 minutes."),
    F(
        "p15",
        "2026-06-07",
        "My bike had a flat tire; the shop on Warschauer Straße fixed it for 15 euros. #bike",
    ),
    F(
        "p16",
        "2026-12-01",
        "Booked a table at Nobelhart for Lena's welcome dinner on Friday. #atlas",
        time="10:05",
    ),
    F("p17", "2026-09-27", "Watched the movie Past Lives with Maria; we both cried at the ending. #movie"),
    F("p18", "2026-11-08", "Watched Dune Part Two at the IMAX; the sound was incredible. #movie"),
    F(
        "p19",
        "2026-03-18",
        "Tax return for 2025 submitted through ELSTER; expecting a refund of about 900 euros. #tax",
    ),
    F(
        "p20",
        "2026-08-21",
        "My passport expires in May 2027: renew it at the Chinese embassy before the next trip. #travel",
    ),
    F(
        "p21",
        "2026-11-23",
        "Dentist checkup: no cavities, next cleaning in six months. #health",
        time="08:00",
    ),
    F(
        "p22",
        "2026-05-30",
        "Tried the new ramen place on Boxhagener Platz; the tonkotsu broth was too salty. #food",
    ),
    F(
        "p23",
        "2026-10-11",
        "Mum's birthday is on October 15th; order flowers to Shanghai by the 12th. #family",
    ),
    F("p24", "2026-07-28", "Vet visit for Mochi the cat: vaccinations done, she weighs 4.2 kg. #cat"),
    F(
        "p25",
        "2026-11-29",
        "Sunday brunch at Father Carpenter with Lena and Priya; the shakshuka was excellent. #food",
        time="12:00",
    ),
    F("p31", "2026-11-30", "Cooked dinner for Priya: mushroom risotto, a bit too salty. #food", time="19:45"),
    F(
        "p26",
        "2025-12-24",
        "Christmas Eve in Hamburg with Tom and his family; roast goose for dinner. #travel",
    ),
    F(
        "p27",
        "2026-11-26",
        "Booked the winter holiday: a cabin in the Harz mountains from December 27 to 30. #travel",
    ),
    # --- Chinese and mixed
    F("z01", "2026-11-30", "晚饭第一次自己做酸菜鱼，味道还不错，就是有点咸。 #food", time="19:30"),
    F("z02", "2026-11-12", "晚饭和同事去吃了海底捞火锅。 #food"),
    F(
        "z03",
        "2026-04-21",
        "学了设计模式里的观察者模式：主题维护订阅者列表，状态变化时通知所有订阅者。 #学习",
    ),
    F("z04", "2026-06-09", "重构订单模块时用了策略模式，把折扣计算拆成独立的策略类。 #学习"),
    F(
        "z05",
        "2026-02-26",
        "交易规则：每笔交易的止损设在买入价下方7%，绝不移动止损。 #投资",
        memory="交易纪律：止损设在买入价下方7%，绝不移动止损",
        importance=0.9,
    ),
    F(
        "z06",
        "2026-10-14",
        "复盘：追高买入宁德时代，没有设置止损，被套20%。教训：先定止损再下单。 #投资 #lesson",
    ),
    F("z07", "2026-01-12", "开始定投指数基金，每月10号自动扣款2000元。 #投资"),
    F("z08", "2026-08-05", "爸爸的降压药是氨氯地平，每天早上吃一片。 #家人"),
    F("z09", "2026-11-26", "妈妈体检结果出来了，血糖偏高，医生建议少吃甜食。 #家人 #health", time="21:00"),
    F("z10", "2026-05-17", "妈妈说血压正常，每天晚饭后散步一小时。 #家人"),
    F("z11", "2026-03-08", "三八节给妈妈寄了一条丝巾。 #家人"),
    F("z12", "2026-03-21", "决定把博客从 Hexo 迁移到 Hugo，构建快多了。 #技术"),
    F(
        "z13",
        "2026-09-02",
        "团队决定每周五下午不开会，留给深度工作。 #工作 #decision",
        memory="团队每周五下午不开会，留给深度工作",
        importance=0.7,
    ),
    F("z14", "2026-07-15", "面试了一个后端候选人，算法不错但系统设计偏弱，决定不录用。 #工作"),
    F("z15", "2026-10-28", "学日语第三个月了，五十音已经背熟。 #学习"),
    F("z16", "2026-11-29", "和 Maria 去柏林爱乐听了音乐会，曲目是马勒第五交响曲。 #音乐", time="20:00"),
    F("z17", "2026-11-27", "加班到十点，终于修好了支付回调的幂等问题。 #工作", time="22:10"),
    F("z18", "2026-04-08", "支付回调偶尔会重复，需要做幂等处理，先记下来。 #工作"),
    F("z19", "2026-06-25", "搬家公司报价：从 Friedrichshain 搬到 Pankow 要 850 欧。 #moving"),
    F("z20", "2026-11-14", "新家的网络终于装好了，Telekom 500M 光纤。 #moving"),
    F("z21", "2026-02-03", "猫粮换成了 Royal Canin 室内配方，Mochi 很爱吃。 #cat"),
    F("z22", "2026-09-19", "在上海和高中同学聚会，十年没见了，大家变化都好大。 #travel"),
    F("z23", "2026-10-05", "读完了《原则》，最有用的一条是把错误当作学习的机会。 #读书"),
    F("z24", "2026-08-30", "健身教练说深蹲时膝盖不要超过脚尖，重心放在脚跟。 #运动"),
    F("z25", "2026-05-22", "Redis 集群做了主从切换演练，切换用了 12 秒。 #技术/后端"),
    F("z26", "2026-07-08", "前端组件库决定用 shadcn/ui，不再自己维护按钮组件。 #技术/前端/React #decision"),
    F("z27", "2026-11-20", "和 Jonas 讨论了 2027 年的预算，云服务费用要降 20%。 #工作"),
    F("z28", "2026-01-28", "春节回不去了，给爸妈发了红包。 #家人"),
    F("z29", "2026-12-01", "今天早上把 v0.9 的发布说明写完了。 #release", time="09:40"),
    F("z30", "2026-06-14", "花粉过敏又犯了，开始吃氯雷他定。 #health"),
    F("z31", "2026-10-19", "周末去了波茨坦无忧宫，秋天的树叶很漂亮。 #travel"),
    F("z32", "2026-04-29", "学会了用 tmux 分屏，把快捷键前缀改成了 Ctrl-a。 #技术"),
    F("z33", "2026-07-24", "Maria 推荐的播客《忽左忽右》很好听，主要讲历史。 #播客 #people/maria"),
    F("z34", "2026-11-10", "妹妹下个月结婚，要赶紧订回国的机票。 #家人"),
    F("z35", "2026-08-16", "数据库连接池被占满，原因是一个慢查询没有加索引。 #技术/后端 #incident"),
    F("z36", "2026-02-19", "租房合同续签了两年，房租不变。 #moving"),
    F("z37", "2025-12-25", "圣诞节在汉堡过的，第一次吃烤鹅。 #travel"),
    F("z38", "2026-03-15", "开始学游泳，每周二晚上上课。 #运动"),
    F("z39", "2026-11-24", "上周一把 Grafana 的报警规则重新整理了一遍，删掉了三十条没用的。 #工作"),
    F(
        "z40",
        "2026-11-30",
        "前天晚上 Maria 的生日聚会唱歌唱到凌晨两点，嗓子都哑了。 #people/maria",
        time="12:20",
    ),
    F("z41", "2026-10-02", "国庆节给爸妈打视频电话，他们在杭州旅游。 #家人"),
    F("z42", "2026-12-01", "早上和 Lena 过了一遍入职清单，下午给她开通 GitHub 权限。 #atlas", time="11:00"),
    # --- written down days after the event (for questions that name the event's period)
    F(
        "p28",
        "2026-11-02",
        "Halloween party at Priya's on Saturday was fun; I went as a vampire. #people/priya",
    ),
    F(
        "p29",
        "2026-11-02",
        "Team offsite in Potsdam last Friday: agreed on the 2027 roadmap themes, multi-tenancy, SSO and audit log. #atlas",
    ),
    F(
        "p30",
        "2026-11-30",
        "Yesterday's hike around the Grunewald lake: 14 km, and the first snow of the year. #运动",
        time="07:50",
    ),
    F("z43", "2026-12-01", "上周日在 Mauerpark 跳蚤市场买了一台旧的胶片相机。 #生活", time="08:10"),
    F("z44", "2026-11-30", "周六去宜家买了书架和台灯，周日组装了一整天。 #moving", time="21:30"),
    # --- MEMORY.md only
    F(
        "m01",
        "2026-05-11",
        "Prefers concise answers: code first, explanation after",
        importance=0.8,
        only_memory=True,
    ),
    F("m02", "2026-09-01", "爸妈住在上海，每周日视频通话", importance=0.6, only_memory=True),
    F("m03", "2026-04-22", "Never deploy on a Friday afternoon", importance=0.8, only_memory=True),
    F(
        "m04",
        "2026-08-19",
        "写代码用 Neovim 编辑器和 LazyVim 配置，不用 VS Code",
        importance=0.4,
        only_memory=True,
    ),
    F(
        "m07",
        "2026-08-19",
        "Uses the Neovim editor with the LazyVim config, never VS Code",
        importance=0.4,
        only_memory=True,
    ),
    F("m05", "2026-10-08", "Atlas 的部署窗口定在周二和周四上午", importance=0.7, only_memory=True),
    F(
        "m06",
        "2026-03-15",
        "Lives in Friedrichshain, Berlin; moved from Shanghai in 2025",
        importance=0.7,
        only_memory=True,
    ),
]


# ---------------------------------------------------------------------------------------------
# Slices added for the kinds of data recall was not tuned on (issue 28). Each slice names its
# kind: ``trad`` (the question in Traditional script), ``dialogue`` (the dialogue so far as the
# query, time words in its chatter), ``log`` (a user-assistant log: the assistant's question
# repeats the words, the user's answer is the memory), ``changed`` (a fact that changed: only
# the current statement answers), ``days`` (a question across days: each day is one group, with
# near-copies on the same day), ``phrase`` (time phrases that name the event's time), ``morph``
# (Chinese words sharing one character with the note's), ``noun`` (a Chinese question whose topic
# is a one-character noun: 茶, 狗, 药, 车, 书), ``task`` (what is still to do: the open task answers,
# not the ticked one beside it or a line that says "still open"), ``ahead`` (a question about days
# still ahead of today: the line written before that names the day answers), ``cross`` (asked in
# the other language than the note's: English question, Chinese note, and the other way round).

FACTS += [
    # --- a user-assistant log
    F("a01q", "2026-10-06", "**Assistant**: What kind of music do you enjoy when you work?", time="20:01"),
    F(
        "a01",
        "2026-10-06",
        "**User**: Mostly jazz piano, Bill Evans and Keith Jarrett; lyrics distract me.",
        time="20:02",
    ),
    F(
        "a02q",
        "2026-08-25",
        "**Assistant**: Which programming languages do you use at your job?",
        time="21:10",
    ),
    F(
        "a02",
        "2026-08-25",
        "**User**: Go for the services and a bit of Rust for the parser, Python only for scripts.",
        time="21:11",
    ),
    F("a03q", "2026-07-14", "**Assistant**: 你平时喜欢看什么类型的电影？", time="22:30"),
    F("a03", "2026-07-14", "**User**: 主要看科幻片和纪录片，最近在补诺兰的作品。", time="22:31"),
    F(
        "a04q",
        "2026-05-19",
        "**Assistant**: What do you usually eat for breakfast on weekdays?",
        time="07:40",
    ),
    F("a04", "2026-05-19", "**User**: Oatmeal with blueberries and a boiled egg.", time="07:41"),
    # --- facts that changed: the older statement is not an answer
    F("c01old", "2026-02-10", "My coffee order is a flat white with whole milk."),
    F("c01", "2026-10-15", "Switched my coffee order to an oat milk cortado; no more flat whites."),
    F("c02old", "2026-03-03", "To-do: renew the car insurance before April."),
    F("c02", "2026-03-28", "Done: renewed the car insurance with HUK, 412 euros a year."),
    F("c03old", "2026-06-01", "Plan: a trip to Lisbon in September with Maria."),
    F("c03", "2026-08-20", "Cancelled the Lisbon trip in September; Maria can't get time off."),
    F("c04old", "2026-04-10", "现在每天喝两杯美式咖啡。"),
    F("c04", "2026-11-03", "戒咖啡了，现在每天只喝绿茶。"),
    F("c05old", "2026-01-15", "Working on the search team with Jonas."),
    F("c05", "2026-09-07", "Moved to the platform team; Jonas stays on the search team."),
    # --- the same activity on many days, with near-copies on one day
    F(
        "d01",
        "2026-10-04",
        "Swam 1.5 km at the Stadtbad Neukölln before work.",
        extra=(
            "Stadtbad Neukölln swim: bought a 10-visit card for the pool.",
            "Swim notes: need new goggles, the old ones leak at the pool.",
        ),
    ),
    F("d02", "2026-10-11", "Swimming again at Stadtbad Neukölln, 2 km, felt strong."),
    F("d03", "2026-10-18", "Short swim, 1 km; the pool was crowded."),
    F("d04", "2026-10-27", "Swam 2.5 km, my longest swim so far."),
    F("d05", "2026-09-06", "早上在公园慢跑了五公里。"),
    F(
        "d06",
        "2026-09-13",
        "晨跑六公里，配速比上周快。",
        extra=("跑步后拉伸了二十分钟，跑步鞋该换了。", "跑步的时候听了一期播客，跑步真解压。"),
    ),
    F("d07", "2026-09-27", "跑步八公里，膝盖有点酸。"),
    # --- time phrases that name when something happened
    F("e01", "2026-05-12", "Back in 2019 I lived in Leipzig and repaired bikes at a shop in Plagwitz."),
    F("e02", "2026-06-02", "Last weekend we drove to the Baltic Sea and stayed in Warnemünde."),
    F("e03", "2026-09-03", "Open-air cinema at the Hasenheide last week: we watched Casablanca."),
    F("e04", "2026-04-20", "The greenhouse has 12 tomato plants and 4 chili plants now."),
    F("e04later", "2026-10-01", "The greenhouse has 20 tomato plants now, and the chilies are gone."),
    F("e05", "2026-03-27", "在 Zalando 做了三年前端工作，这个月底离职，下个月去新公司。"),
    F("e06", "2026-01-22", "Snow all week; the Landwehr canal froze over for the first time in years."),
    # --- Traditional script in a note
    F("t01", "2026-09-08", "跟朋友去陽明山爬山，看到很多蝴蝶。"),
    # --- Chinese words that share one character
    F("k01", "2026-07-05", "在颐和园拍了很多照片，荷花开得正好。"),
    F("k02", "2026-03-09", "非常厌恶香菜的味道，点菜时记得说不要香菜。"),
    # --- a one-character noun is what the question is about
    F("n01", "2026-04-18", "朋友送了一盒武夷山的大红袍茶，泡了三次还很浓。"),
    F("n02", "2026-06-09", "邻居家的狗叫豆豆，是一只两岁的柯基。"),
    F("n03", "2026-02-17", "牙医开了甲硝唑，饭后吃药，一天三次，吃五天。"),
    F("n04", "2026-08-02", "在二手市场看中了一辆 2015 年的斯柯达明锐，车况不错。"),
    F("n05", "2026-10-22", "最近睡前在读的书是《三体》第二部，读到一半了。"),
    # --- what is still to do: the open task answers; the ticked task and the line that says "still
    # open" beside it (the *x facts, asked by no query) do not
    F("o01", "2026-11-20", "[ ] Send the passport photos for the visa application to the embassy"),
    F("o01x", "2026-11-20", "[x] Book the visa appointment at the embassy"),
    F("o01y", "2026-11-21", "The visa application is still open at the embassy."),
    F("o02", "2026-10-03", "[ ] Replace the bike chain before the Ostsee tour"),
    F("o02x", "2026-10-04", "The old bike chain still needs oil."),
    F("o03", "2026-11-12", "[ ] 给房东发邮件问暖气维修的事"),
    F("o03x", "2026-11-12", "[x] 给房东转了十二月的房租"),
    F("o04", "2026-09-14", "[ ] 周末前把旧照片整理好，做成相册"),
    F("o04x", "2026-09-15", "旧照片整理了一半，还没做完，太多了。"),
    # --- days still ahead of the set's today (2026-12-01): what answers was written before
    F(
        "a01",
        "2026-11-27",
        "Booked the car inspection for next Wednesday at 8:30, the garage on Storkower Str.",
    ),
    F("a02", "2026-12-01", "明天下午两点去银行办房贷的手续，带上护照和工资单。"),
    F("a03", "2026-11-25", "Flight to Lisbon on 2026-12-05, TAP 571, leaves at 07:10."),
    F("a04", "2026-11-30", "下周三晚上和老同学聚餐，在望京的那家烤鸭店。"),
    # --- asked in the other language than the note's
    F("x01", "2026-10-12", "妈妈的生日是 11 月 2 日，记得提前寄礼物。"),
    F("x02", "2026-08-21", "在跳蚤市场花十五欧买了一个复古台灯。"),
    F("x03", "2026-05-30", "Dentist said the wisdom tooth has to come out in July."),
    F("x04", "2026-09-03", "Renewed the passport at the consulate, the new one is valid until 2036."),
]

# ---------------------------------------------------------------------------------------------
# Queries: (text, answering facts, extra slices). Language, tag and dup slices are derived.

_Q: list[tuple[str, str, str]] = [  # the first 174: the "core" slice (the set before issue 28)
    # --- English, natural-language questions
    ("What did we decide about auth last week?", "w01", "time question"),
    ("What did we decide about auth?", "w01", "question"),
    ("Which vector database did we choose for semantic search?", "w03", "question"),
    ("Why did the ingest queue stall?", "w04", "question"),
    ("What caused the Kafka consumer lag alert?", "w05", "question"),
    ("How big should a pull request be?", "w06", "question"),
    ("How many nodes does the staging cluster have?", "w07", "question"),
    ("When are invoices generated?", "w08", "question"),
    ("What is the rate limit of the public API?", "w09", "question"),
    ("Why did we roll back the release last Friday?", "w10", "time question"),
    ("Where is the Sentry DSN stored?", "w11", "question"),
    ("How long did the CI build take after moving to GitHub Actions?", "w12", "question"),
    ("Who suggested feature flags?", "w13", "question"),
    ("How many requests per second can the recall endpoint handle?", "w14", "question"),
    ("What separator does the CSV export need for the Hamburg demo?", "w15", "question"),
    ("Who should I ask before changing the onboarding screens?", "w16", "question"),
    ("Which state management library did the frontend switch to?", "w17", "question"),
    ("Why did sprint planning move to Monday?", "w18", "question"),
    ("Did the tenants migration finish yesterday?", "w19", "time question"),
    ("How long did the tenants migration dry run take?", "w20", "question"),
    ("Are we splitting the billing service out of the monorepo?", "w21", "question"),
    ("Where is the onboarding doc for backend hires?", "w22", "question"),
    ("When did Maria start going to the climbing gym?", "p01", "question"),
    ("What grade did Maria climb?", "p02", "question"),
    ("How was Maria's birthday party last week?", "p03", "time question late"),
    ("What did I buy Tom for his birthday?", "p04", "question"),
    ("What did the dentist say about my molar?", "p05", "question"),
    ("How much did the crown cost?", "p06", "question"),
    ("Which flight did I book to Shanghai?", "p07", "question"),
    ("What did Mum cook when I landed in Shanghai?", "p08", "question"),
    ("How much is the rent from July?", "p09", "question"),
    ("Which book am I re-reading?", "p10", "question"),
    ("What am I allergic to?", "p11", "question"),
    ("What was my new year's resolution?", "p12", "question"),
    ("What was my time in the 10k race last week?", "p13", "time question"),
    ("Where did I get my bike tire fixed?", "p15", "question"),
    ("Where is Lena's welcome dinner?", "p16", "question"),
    ("Which movie did I watch with Maria?", "p17", "question"),
    ("What movie did I see last month?", "p18", "time question"),
    ("How much tax refund do I expect?", "p19", "question"),
    ("When does my passport expire?", "p20", "question"),
    ("What did the dentist say last week?", "p21", "time question"),
    ("Where did I have brunch two days ago?", "p25", "time question"),
    ("Where did I spend Christmas last year?", "p26", "time question"),
    ("Where are we going for the winter holiday?", "p27", "question"),
    ("When is Mum's birthday?", "p23", "question"),
    ("How much does Mochi weigh?", "p24", "question"),
    ("What did I cook for dinner yesterday?", "p31", "time question"),
    ("What did we discuss about the budget recently?", "w23", "time question"),
    ("What should I never do on a Friday afternoon?", "m03", "question"),
    ("How do I like answers to be written?", "m01", "question"),
    ("Where do I live?", "m06", "question"),
    ("Which editor do I use?", "m07", "question"),
    ("What did I do in March about the dentist?", "p06", "time question"),
    ("What happened with Atlas yesterday?", "w19", "time question"),
    ("Did anything break after the deploy in October?", "w05", "time question"),
    ("Who went climbing with me in April?", "p01 p02", "time question"),
    ("How did the Grafana alert cleanup go last week?", "z39", "time question late"),
    ("What did I do with Lena this morning?", "p16", "time question"),
    ("What costume did I wear to the Halloween party in October?", "p28", "time question late"),
    ("What did we agree at the team offsite in October?", "p29", "time question late"),
    ("How long was the hike last weekend?", "p30", "time question late"),
    ("What did I do last weekend?", "p13 p25 p30", "time question late"),
    # --- English keyword queries
    ("Keycloak OIDC", "w01", "keyword"),
    ("Qdrant pgvector", "w03", "keyword"),
    ("redis maxmemory noeviction", "w04", "keyword"),
    ("kafka rebalance", "w05", "keyword"),
    ("pull request size", "w06", "keyword"),
    ("kubernetes staging nodes", "w07", "keyword"),
    ("invoice cron", "w08", "keyword"),
    ("rate limit api", "w09", "keyword"),
    ("rollback 0.8.3", "w10", "keyword"),
    ("sentry dsn", "w11", "keyword"),
    ("jenkins github actions", "w12", "keyword"),
    ("unleash feature flags", "w13", "keyword"),
    ("load test rps", "w14", "keyword"),
    ("csv semicolons", "w15", "keyword"),
    ("zustand redux", "w17", "keyword"),
    ("tenants migration", "w19 w20", "keyword"),
    ("monorepo", "w21", "keyword"),
    ("climbing gym", "p01 p02", "keyword"),
    ("dentist", "p05 p06 p21", "keyword"),
    ("peanut allergy", "p11", "keyword"),
    ("10k race", "p13 p14", "keyword"),
    ("rent increase landlord", "p09", "keyword"),
    ("passport renew", "p20", "keyword"),
    ("ramen", "p22", "keyword"),
    ("Mochi vet", "p24", "keyword"),
    ("ELSTER tax refund", "p19", "keyword"),
    ("Harz cabin", "p27", "keyword"),
    ("Past Lives", "p17", "keyword"),
    ("#health dentist", "p05 p06 p21", "keyword"),
    ("tag:people/maria birthday", "p03", "keyword"),
    ("#decision auth", "w01", "keyword"),
    ("#incident redis", "w04", "keyword"),
    ("#travel Shanghai", "p07 p08", "keyword"),
    ("Neovim LazyVim", "m07", "keyword"),
    ("Friday deploy", "m03", "keyword"),
    # --- Chinese questions
    ("昨天晚饭吃了什么？", "z01", "time question"),
    ("我之前学过的那个设计模式叫什么来着？", "z03 z04", "question"),
    ("观察者模式是怎么工作的？", "z03", "question"),
    ("重构订单模块用了什么模式？", "z04", "question"),
    ("止损应该设在多少？", "z05", "question"),
    ("宁德时代那次亏损的教训是什么？", "z06", "question"),
    ("基金定投每个月扣多少钱？", "z07", "question"),
    ("爸爸吃的降压药叫什么？", "z08", "question"),
    ("上周妈妈的体检结果怎么样？", "z09", "time question"),
    ("妈妈的血压怎么样？", "z10", "question"),
    ("三月给妈妈寄了什么？", "z11", "time question"),
    ("2026年3月博客迁移到了什么？", "z12", "time question"),
    ("团队周五下午还开会吗？", "z13", "question"),
    ("那个后端候选人为什么没录用？", "z14", "question"),
    ("日语学得怎么样了？", "z15", "question"),
    ("前天晚上去听了什么音乐会？", "z16", "time question"),
    ("上周五加班修了什么问题？", "z17", "time question"),
    ("支付回调重复的问题修好了吗？", "z17 z18", "question"),
    ("搬家公司报价多少？", "z19", "question"),
    ("上个月新家的网络装好了吗？", "z20", "time question"),
    ("猫粮换成了哪个牌子？", "z21", "question"),
    ("在上海和谁聚会了？", "z22", "question"),
    ("《原则》里最有用的是什么？", "z23", "question"),
    ("深蹲的时候要注意什么？", "z24", "question"),
    ("Redis 主从切换用了多久？", "z25", "question"),
    ("前端组件库最后选了什么？", "z26", "question"),
    ("最近和 Jonas 讨论了什么？", "z27", "time question"),
    ("春节给爸妈发红包了吗？", "z28", "question"),
    ("今天早上写完了什么？", "z29", "time question"),
    ("我对什么过敏？", "z30", "question"),
    ("十月去哪里玩了？", "z31", "time question"),
    ("tmux 的快捷键前缀改成什么了？", "z32", "question"),
    ("Maria 推荐的播客叫什么？", "z33", "question"),
    ("妹妹什么时候结婚？", "z34", "question"),
    ("数据库连接池为什么满了？", "z35", "question"),
    ("租房合同续签了多久？", "z36", "question"),
    ("去年圣诞节在哪里过的？", "z37", "time question"),
    ("游泳课是每周几？", "z38", "question"),
    ("上周整理了哪些报警规则？", "z39", "time question"),
    ("Maria 的生日聚会怎么样？", "z40", "question"),
    ("国庆节爸妈在哪里旅游？", "z41", "question"),
    ("爸妈住在哪里？", "m02", "question"),
    ("Atlas 什么时候可以部署？", "m05", "question"),
    ("我用什么编辑器写代码？", "m04", "question"),
    ("交易纪律是什么？", "z05", "question"),
    ("上个月晚饭和同事吃了什么？", "z02", "time question"),
    ("前天和 Maria 做了什么？", "z16", "time question"),
    ("今天和 Lena 做了什么？", "z42", "time question"),
    ("上周在跳蚤市场买了什么？", "z43", "time question late"),
    ("前天组装了什么家具？", "z44", "time question late"),
    ("上周末做了什么？", "z16 z43 z44", "time question late"),
    # --- Chinese keyword queries
    ("酸菜鱼", "z01", "keyword"),
    ("观察者模式", "z03", "keyword"),
    ("策略模式", "z04", "keyword"),
    ("止损", "z05 z06", "keyword"),
    ("定投", "z07", "keyword"),
    ("降压药", "z08", "keyword"),
    ("血糖", "z09", "keyword"),
    ("Hugo 博客", "z12", "keyword"),
    ("幂等", "z17 z18", "keyword"),
    ("搬家 报价", "z19", "keyword"),
    ("猫粮", "z21", "keyword"),
    ("深蹲 膝盖", "z24", "keyword"),
    ("主从切换", "z25", "keyword"),
    ("shadcn 组件库", "z26", "keyword"),
    ("花粉过敏", "z30", "keyword"),
    ("无忧宫", "z31", "keyword"),
    ("tmux 快捷键", "z32", "keyword"),
    ("播客", "z33", "keyword"),
    ("连接池 慢查询", "z35", "keyword"),
    ("游泳", "z38", "keyword"),
    ("#投资 止损", "z05 z06", "keyword"),
    ("#技术 组件库", "z26", "keyword"),
    ("tag:家人 妈妈", "z09 z10 z11", "keyword"),
    ("部署窗口", "m05", "keyword"),
    ("编辑器", "m04", "keyword"),
]

_Q += [
    # --- the question in Traditional script, the note in Simplified (and one the other way)
    ("爸爸吃的降壓藥叫什麼？", "z08", "trad question"),
    ("搬家公司報價多少？", "z19", "trad question"),
    ("貓糧換成了哪個牌子？", "z21", "trad question"),
    ("我有沒有提過深蹲的時候要注意什麼？", "z24", "trad question"),
    ("媽媽的血壓怎麼樣？", "z10", "trad question"),
    ("觀察者模式是怎麼工作的？", "z03", "trad question"),
    ("團隊週五下午還開會嗎？", "z13", "trad question"),
    ("去阳明山看到了什么？", "t01", "trad question"),
    # --- the dialogue so far as the query
    (
        "User: hey, good morning!\nAssistant: Good morning! How can I help you today?\n"
        "User: I'm planning dinner tonight and thinking about going out, the weather is nice today.\n"
        "Assistant: Nice. Any cuisine in mind?\nUser: what was that ramen place I tried, was the broth good?",
        "p22",
        "dialogue question",
    ),
    (
        "用户：你好，今天天气不错。\n助手：是啊，今天有什么可以帮你的？\n"
        "用户：我今天想整理一下投资的事情，顺便想想周末做什么。\n助手：好的，你想从哪里开始？\n"
        "用户：我之前定投的基金每个月扣多少钱？",
        "z07",
        "dialogue question",
    ),
    (
        "User: So today I finally cleaned my desk and found a lot of old stuff.\n"
        "Assistant: That sounds satisfying! Anything interesting?\n"
        "User: Some receipts, old cables, and the manual for my bike.\nAssistant: Do you still ride it a lot?\n"
        "User: Yes. Where did I get the flat tire fixed last time?",
        "p15",
        "dialogue question",
    ),
    (
        "User: I have a long week ahead, meetings every day.\nAssistant: Sounds busy. Want help preparing?\n"
        "User: Yes, for the infrastructure one today. How many nodes does the staging cluster run on?",
        "w07",
        "dialogue question",
    ),
    (
        "用户：最近工作有点累，今天也加班了。\n助手：要注意休息。有什么我能帮忙的吗？\n"
        "用户：帮我回忆一下，健身教练说深蹲的时候要注意什么？",
        "z24",
        "dialogue question",
    ),
    (
        "User: morning! today is a bit hectic\nAssistant: I'm here to help. What's up?\n"
        "User: My friend is cooking for me tonight and wants to make a Thai curry with a sauce.\n"
        "Assistant: Good of her to ask what you can eat.\nUser: what am I allergic to again?",
        "p11",
        "dialogue question",
    ),
    # --- a user-assistant log: the answer, not the question that repeats the words
    ("What kind of music do I enjoy when I work?", "a01", "log question"),
    ("Which programming languages do I use at my job?", "a02", "log question"),
    ("我平时喜欢看什么类型的电影？", "a03", "log question"),
    ("What do I usually eat for breakfast on weekdays?", "a04", "log question"),
    # --- changed facts: the current statement first
    ("What is my coffee order?", "c01", "changed question"),
    ("Is renewing the car insurance still on my list?", "c02", "changed question"),
    ("Am I going on the Lisbon trip in September?", "c03", "changed question"),
    ("我现在每天喝什么？", "c04", "changed question"),
    ("Which team am I on?", "c05", "changed question"),
    # --- questions across days: each day is one answer
    ("How often did I go swimming in October?", "d01 d02 d03 d04", "days question time"),
    ("九月跑了几次步？", "d05 d06 d07", "days question time morph"),
    # --- time phrases
    ("Where did I live in 2019?", "e01", "phrase question time"),
    ("Where did we go the last weekend of May?", "e02", "phrase question time late"),
    ("What film did we watch towards the end of summer 2026?", "e03", "phrase question time late"),
    ("How many tomato plants were in the greenhouse as of May 2026?", "e04", "phrase question time"),
    ("2026 年 4 月以前 我在哪里工作？", "e05", "phrase question time"),
    ("What froze over in the second half of January?", "e06", "phrase question time"),
    # --- Chinese words that share one character with the note's
    ("在颐和园拍照了吗？", "k01", "morph question"),
    ("我讨厌什么味道？", "k02", "morph question"),
    # --- a one-character noun is the topic
    ("朋友送了我什么茶？", "n01", "noun question"),
    ("邻居的狗叫什么？", "n02", "noun question"),
    ("牙医给我开了什么药？", "n03", "noun question"),
    ("在二手市场看中了什么车？", "n04", "noun question"),
    ("我最近在读什么书？", "n05", "noun question"),
    # --- what is still to do
    ("What do I still need to do for the visa application?", "o01", "task question"),
    ("which tasks are still open for the bike?", "o02", "task question"),
    ("还有哪些关于房东的待办？", "o03", "task question"),
    ("整理旧照片还没做完的事", "o04", "task question"),
    # --- days still ahead
    ("What do I have tomorrow?", "a01", "ahead question"),
    ("明天有什么安排？", "a02", "ahead question"),
    ("what's coming up this weekend?", "a03", "ahead question"),
    ("下周有什么安排？", "a04", "ahead question"),
    # --- asked in the other language than the note's
    ("When is my mother's birthday?", "x01", "cross question"),
    ("What did I find at the flea market?", "x02", "cross question"),
    ("牙医说了什么？", "x03", "cross question"),
    ("我的护照有效期到哪年？", "x04", "cross question"),
]

CORE_QUERIES = 174

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7a3]")
_TAG = re.compile(r"(?:^|\s)(?:#|tag:)\S")
_FACTS = {f.id: f for f in FACTS}


def _slices(text: str, facts: tuple[str, ...], extra: str) -> frozenset[str]:
    slices = set(extra.split())
    slices.add("zh" if _CJK.search(text) else "en")
    if _TAG.search(text):
        slices.add("tag")
    if any(_FACTS[f].memory for f in facts):
        slices.add("dup")
    return frozenset(slices)


QUERIES: list[Query] = [
    Query(t, tuple(f.split()), _slices(t, tuple(f.split()), s + (" core" if i < CORE_QUERIES else "")))
    for i, (t, f, s) in enumerate(_Q)
]


# ---------------------------------------------------------------------------------------------
# Building the vault


@dataclass
class Built:
    vault: Path
    places: dict[str, set[str]] = field(default_factory=dict)  # fact id -> {"path:line", ...}
    entries: int = 0

    def relevant(self, query: Query) -> list[set[str]]:
        """One group of places per fact that answers ``query``."""
        return [self.places[f] for f in query.facts]


def _daily_line(fact: Fact) -> str:
    return f"- {fact.time} {fact.text}" if fact.time else f"- {fact.text}"


def _memory_line(fact: Fact, index: int) -> str:
    text = fact.text if fact.only_memory else (fact.memory or fact.text)
    importance = fact.importance if fact.importance is not None else 0.6
    source = "" if fact.only_memory else f" [source:: [[{fact.date}]]]"
    return f"- {fact.date}: {text} [importance:: {importance}]{source} ^m-bench{index:03d}"


def plant(vault: Path) -> None:
    """Append the facts to the generated vault's daily notes and MEMORY.md."""
    by_day: dict[str, list[Fact]] = defaultdict(list)
    for fact in FACTS:
        if not fact.only_memory:
            by_day[fact.date].append(fact)
    for day, facts in sorted(by_day.items()):
        path = vault / "memory" / f"{day}.md"
        lines = [line for f in facts for line in (_daily_line(f), *(f"- {x}" for x in f.extra))]
        if path.exists():
            text = path.read_text(encoding="utf-8").rstrip("\n") + "\n\n## Log\n\n" + "\n".join(lines) + "\n"
        else:
            text = f"---\ndate: {day}\ntags: [daily]\n---\n# {day}\n\n" + "\n".join(lines) + "\n"
        path.write_text(text, encoding="utf-8")
    memory = [f for f in FACTS if f.memory or f.only_memory]
    path = vault / "MEMORY.md"
    text = path.read_text(encoding="utf-8").rstrip("\n")
    text += "\n\n## Curated\n\n" + "\n".join(_memory_line(f, i) for i, f in enumerate(memory)) + "\n"
    path.write_text(text, encoding="utf-8")


def locate(vault: Path) -> dict[str, set[str]]:
    """Where each fact ended up: the daily entry and the MEMORY item, as ``path:line``."""
    from vault_tools.notes.model import TASK_BOX, read_vault

    loaded, _ = read_vault(vault)
    places: dict[str, set[str]] = {f.id: set() for f in FACTS}
    wanted_daily = {TASK_BOX.sub("", f.text): f.id for f in FACTS if not f.only_memory}
    wanted_daily.update({x: f.id for f in FACTS for x in f.extra})
    wanted_memory = {
        (f.text if f.only_memory else f.memory): f.id for f in FACTS if f.memory or f.only_memory
    }
    for note in loaded:
        for entry in note.entries:
            place = f"{entry.rel_path}:{entry.start_line}"
            if note.kind == "memory" and entry.text in wanted_memory:
                places[wanted_memory[entry.text]].add(place)
            elif note.kind == "daily" and entry.text in wanted_daily:
                places[wanted_daily[entry.text]].add(place)
    missing = [fid for fid, found in places.items() if not found]
    if missing:
        raise RuntimeError(f"planted facts not found in the vault: {missing}")
    return places


def build(out: Path, *, entries: int = BACKGROUND_ENTRIES, seed: int = 7) -> Built:
    """Generate the background vault into ``out``, plant the facts, and locate them."""
    from genvault import generate

    generated = generate(out, entries=entries, seed=seed, memory_items=200, years=BACKGROUND_YEARS, end=AS_OF)
    plant(out)
    return Built(out, locate(out), generated.entries + len(FACTS))


def summary() -> str:
    counts: dict[str, int] = defaultdict(int)
    for query in QUERIES:
        for s in query.slices:
            counts[s] += 1
    parts = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    return f"{len(QUERIES)} queries over {len(FACTS)} facts ({parts})"


if __name__ == "__main__":
    print(summary())
