#!/usr/bin/env bash
# Makes the Python client's test environment: a venv at .faheem/python-venv (ignored by git) with
# the package installed as a user installs it (`./python[test]`), and prints its python.
# The interpreter is FAHEEM_PYTHON, else python3; it must be 3.10 or later (with pyenv:
# FAHEEM_PYTHON=~/.pyenv/versions/3.12.1/bin/python3).
# The installer is uv (pinned by hash, installed once from PyPI into ~/.cache/faheem/uv-<version>,
# or FAHEEM_UV): from its cache a fresh venv takes ~2 s where pip takes ~40. Where uv cannot be
# had, pip does the same work.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${FAHEEM_PYTHON:-python3}"
VENV=.faheem/python-venv
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
  echo "python client: $("$PYTHON" --version 2>&1) is older than 3.10; set FAHEEM_PYTHON to a newer one (e.g. from pyenv)" >&2
  exit 1
fi

UV_VERSION=0.13.9
# The wheels of uv $UV_VERSION for Linux (x86_64, aarch64) and macOS (x86_64, arm64).
UV_HASHES=(
  d7f459fe4fd247d830351c75686d3996ace3c6f3f728eb0e85a30b7ada0cef19
  5435c5ce14a56431208ca0996416d310f1598e8c2c8ba707688985a16bb82dbe
  c16ed11e013557536b3e60065f1b912f6407bd6518e041b961e23ef9e6b4fbf5
  66c512266d633bef48384a1f53003f41f2a8e7b36fe6e7fbfd3e0fd52d96fa63
)

# Prints the uv to use, installing the pinned one into the cache the first time; nothing when it cannot.
find_uv() {
  if [ -n "${FAHEEM_UV:-}" ]; then
    echo "$FAHEEM_UV"
    return
  fi
  local home="${XDG_CACHE_HOME:-$HOME/.cache}/faheem/uv-$UV_VERSION"
  if [ ! -x "$home/bin/uv" ]; then
    local requirements
    requirements="$(mktemp)"
    printf 'uv==%s' "$UV_VERSION" >"$requirements"
    for h in "${UV_HASHES[@]}"; do printf ' --hash=sha256:%s' "$h" >>"$requirements"; done
    echo >>"$requirements"
    rm -rf "$home.partial"
    if "$PYTHON" -m venv "$home.partial" >&2 &&
      "$home.partial/bin/pip" install --quiet --disable-pip-version-check --require-hashes -r "$requirements" >&2; then
      rm -rf "$home"
      mv "$home.partial" "$home"
    else
      echo "python client: uv $UV_VERSION could not be installed; pip makes the venv instead (slower)" >&2
      rm -rf "$home.partial"
    fi
    rm -f "$requirements"
  fi
  # The wheel's `uv` is the binary itself (no script naming the venv's path).
  if "$home/bin/uv" --version >/dev/null 2>&1; then echo "$home/bin/uv"; fi
}

UV="$(find_uv)"
if [ -n "$UV" ]; then
  [ -x "$VENV/bin/python" ] || "$UV" venv --quiet --python "$PYTHON" "$VENV" >&2
  VIRTUAL_ENV="$PWD/$VENV" "$UV" pip install --quiet './python[test]' >&2
  # The same version number again: install this tree's code, not the copy the cache kept.
  VIRTUAL_ENV="$PWD/$VENV" "$UV" pip install --quiet --reinstall --no-deps ./python >&2
else
  [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
  # A venv uv made has no pip of its own.
  "$VENV/bin/python" -m pip --version >/dev/null 2>&1 || "$VENV/bin/python" -m ensurepip --upgrade >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check './python[test]' >&2
  # The same version number again: install this tree's code, not the copy pip kept.
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps ./python >&2
fi
echo "$VENV/bin/python"
