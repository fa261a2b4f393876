"""The Markdown model: a note read into entries, and changed by atomic, conflict-checked line splices.

Owns: parsing notes and their front matter (:mod:`.model`), re-reading only what was appended
(:mod:`.tail`). May import: the base modules (``errors``, ``config``, ``locks``) only.
"""
