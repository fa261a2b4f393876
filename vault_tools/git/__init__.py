"""Git: the vault's repository (bot commits that touch only the bot's files), git's own locks, and
sync with a remote (the person's notes committed first).

May import: the base modules, notes, privacy.
"""
