"""Privacy isolation: who may see an entry, what may be promoted, what may reach a language model,
and where secrets and personal data are in a text.

May import: the base modules and :mod:`vault_tools.notes`.
"""
