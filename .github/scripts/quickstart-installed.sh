#!/usr/bin/env bash
# The README's quickstart with an installed vault-tools, run outside the checkout.
# Usage: quickstart-installed.sh BIN, the bin folder of the environment vault-tools is installed in.
# Fails unless the code that runs is that environment's (not a checkout's) and recall answers.
set -euo pipefail
bin="$1"
cd "$(mktemp -d)"
"$bin/vault-tools" --version
"$bin/python" - <<'PY'
import sys

import vault_tools
import vault_tools.agents.vault

where = [vault_tools.__file__, str(vault_tools.agents.vault.sample_vault_dir())]
print(*where, sep="\n")
assert all(path.startswith(sys.prefix) for path in where), f"not the installed copy: {where}"
PY
D="$(mktemp -d)/vault"
"$bin/vault-tools" init "$D" --sample
"$bin/vault-tools" heartbeat --vault "$D"
"$bin/vault-tools" recall --vault "$D" "我对什么过敏?" | tee recall.txt
grep -q '^MEMORY.md:' recall.txt
grep -q '我对花生和坚果\*\*过敏\*\*' recall.txt
git -C "$D" log --oneline
