"""``vault-tools watch``: the watchdog observer that keeps the index current, and the recall service
it runs on a Unix socket.

May import: everything but the CLI.
"""
