"""The heartbeat, the maintenance bot: plan a run, splice MEMORY.md, commit each change, keep the
journal and state, undo, and the schedule that runs it.

May import: the base modules, notes, privacy, recall, git, curation, summaries.
"""
