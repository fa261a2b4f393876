"""A question about what is still to do: "what is on my to-do list?", "我还有哪些待办？".

People keep to-dos as Markdown tasks (``- [ ] call the landlord``) and tick them when done
(``- [x]``). A question that asks for the open ones names the list, not a topic: its words
("to-do", "task list", "on my list", "still need to do", 待办, 还没做) match nothing a task says,
and plain keyword search answers it with whatever line says "still" or "list". Such a question
is read here: its task words are cut out (what is left, "for the move", is the topic) and recall
searches open tasks only (``Filters.task``), newest first when no topic is left. When no open
task matches a topic, recall searches everything as usual rather than answer nothing.

The words are kept narrow on purpose: "how did the migration task go?" is about an event, so a
lone "task" is not a question about the list; "my tasks", "open tasks" and "task list" are.
"""

from __future__ import annotations

import re

__all__ = ["open_task_question"]

_ASKS_FOR_OPEN_TASKS = re.compile(
    r"(?i:\b(?:to-?dos?|to[ -]do list|(?:my|open|pending|outstanding|unfinished|remaining)\s+"
    r"(?:tasks?|items?|to-?dos?)|task\s*list|on\s+my\s+(?:to-?do\s+|task\s+)?list"
    r"|(?:still\s+)?left\s+to\s+do|still\s+(?:need|have|got)\s+to\s+do"
    r"|tasks?\b(?=.*\b(?:open|pending|outstanding|unfinished|undone|not\s+done|left)\b))\b)"
    r"|待办(?:事项|清单)?|待辦(?:事項|清單)?|任务清单|任務清單|清单上|清單上|未完成的(?:任务|任務|事)?"
    r"|还没做(?:完)?的?|還沒做(?:完)?的?|没做完的?|沒做完的?|还要做的?|還要做的?"
)


# Once a question asks for the list, these say nothing of a topic: "what tasks are still open?",
# "我还有哪些待办？".
_LIST_WORDS = re.compile(
    r"(?i:\b(?:still|open|pending|outstanding|unfinished|undone|left|remaining|need|needs|have|has|got"
    r"|do|does|doing|done|not|yet)\b)|还有|还要|还|哪些|什么|有|要|做|的|事情|事"
)


def open_task_question(text: str) -> tuple[bool, str]:
    """Whether ``text`` asks for open tasks, and ``text`` without the words that ask it."""
    if not _ASKS_FOR_OPEN_TASKS.search(text):
        return False, text
    rest = _LIST_WORDS.sub(" ", _ASKS_FOR_OPEN_TASKS.sub(" ", text))
    return True, re.sub(r"\s+", " ", rest).strip()
