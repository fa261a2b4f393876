"""The Whoosh index of entries: documents, the writer, building, healing, the doctor, and the
watcher's append path. The index is disposable: it is rebuilt from the notes whenever in doubt.

May import: the base modules, :mod:`vault_tools.notes`, :mod:`vault_tools.privacy`.
"""
