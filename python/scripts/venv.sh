#!/usr/bin/env bash
# Makes the Python client's test environment: a venv at .faheem/python-venv (ignored by git) with
# the package installed as a user installs it (`pip install ./python[test]`), and prints its python.
# The interpreter is FAHEEM_PYTHON, else python3; it must be 3.10 or later (with pyenv:
# FAHEEM_PYTHON=~/.pyenv/versions/3.12.1/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${FAHEEM_PYTHON:-python3}"
VENV=.faheem/python-venv
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
  echo "python client: $("$PYTHON" --version 2>&1) is older than 3.10; set FAHEEM_PYTHON to a newer one (e.g. from pyenv)" >&2
  exit 1
fi
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check './python[test]' >&2
# The same version number again: install this tree's code, not the copy pip kept.
"$VENV/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps ./python >&2
echo "$VENV/bin/python"
