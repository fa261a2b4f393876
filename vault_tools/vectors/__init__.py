"""Opt-in semantic recall: the embeddings client, the vector cache, its matrix and its status.

May import: the base modules, notes, privacy, index.
"""
