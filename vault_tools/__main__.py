import sys

from vault_tools.cli import main

sys.exit(main())
