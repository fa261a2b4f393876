"""Curation: what in the notes is worth keeping. Salience of sentences, insights from entries
(rules offline), near-duplicates, and the language-model path with its grounding.

May import: the base modules, notes, privacy.
"""
