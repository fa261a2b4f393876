"""Recall: questions to date windows (time words), the query, filters, ranking, fusion and results;
``upcoming`` (dated items still ahead) and the ``WHEN`` reader of every date argument.

Modules, lowest first: ``dates`` (calendar arithmetic, date words), ``timewords`` (a question's time
words, read back from today) and ``named_dates`` (the days a note names, read forward from its date);
``tuning`` (every ranking constant), ``query``, ``filters``, ``ranking``, ``fusion``, ``results``;
``warm`` (a searcher kept current) and ``semantic`` (the vector side), which ``recall`` composes.

May import: the base modules, notes, privacy, index, vectors.
"""
