"""Summaries of closed weeks and months: what they say (rules or a language model) and writing them.

May import: the base modules, notes, privacy, recall, git, curation.
"""
