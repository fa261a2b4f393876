import sys

from vault_tools.cli import main

if __name__ == "__main__":
    sys.exit(main())
