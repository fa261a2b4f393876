"""Recall: questions to date windows (time words), the query, filters, ranking, fusion and results;
``upcoming`` (dated items still ahead) and the ``WHEN`` reader of every date argument.

May import: the base modules, notes, privacy, index, vectors.
"""
