#!/usr/bin/env bash
# Makes the Python client's test environment: a venv at .faheem/python-venv (ignored by git) with
# the package installed as a user installs it (`./python[test]`), and prints its python.
# The interpreter is FAHEEM_PYTHON, else python3; it must be 3.10 or later (with pyenv:
# FAHEEM_PYTHON=~/.pyenv/versions/3.12.1/bin/python3).
# The installer is uv (pinned by hash, installed once from PyPI into ~/.cache/faheem/uv-<version>,
# or FAHEEM_UV): from its cache a fresh venv takes ~3 s where pip took ~43. Where uv cannot be
# had or cannot fetch, pip does the same work.
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
  local cache="${XDG_CACHE_HOME:-${HOME:+$HOME/.cache}}"
  [ -n "$cache" ] || return 0
  local home="$cache/faheem/uv-$UV_VERSION"
  if [ ! -x "$home/bin/uv" ]; then
    local work requirements
    # Run in a command substitution, where `set -e` does not reach: each step says what failing means.
    mkdir -p "$(dirname "$home")" && work="$(mktemp -d "$home.partial-XXXXXX")" || {
      echo "python client: no cache folder for uv under $cache; pip makes the venv instead (slower)" >&2
      return 0
    }
    requirements="$work.requirements"
    printf 'uv==%s' "$UV_VERSION" >"$requirements"
    for h in "${UV_HASHES[@]}"; do printf ' --hash=sha256:%s' "$h" >>"$requirements"; done
    echo >>"$requirements"
    if "$PYTHON" -m venv "$work" >&2 &&
      "$work/bin/pip" install --quiet --disable-pip-version-check --require-hashes -r "$requirements" >&2 &&
      [ ! -x "$home/bin/uv" ]; then
      rm -rf "$home"
      mv "$work" "$home" || rm -rf "$work" # another run got there first: theirs serves
    else
      [ -x "$home/bin/uv" ] || echo "python client: uv $UV_VERSION could not be installed; pip makes the venv instead (slower)" >&2
      rm -rf "$work"
    fi
    rm -f "$requirements"
  fi
  # The wheel's `uv` is the binary itself (no script naming the venv's path).
  if "$home/bin/uv" --version >/dev/null 2>&1; then echo "$home/bin/uv"; fi
}

# With uv: the venv (made again when its python is gone), the package and its test extras.
with_uv() {
  local python
  python="$("$PYTHON" -c 'import sys; print(sys.executable)')"
  [ -x "$VENV/bin/python" ] || "$UV" venv --quiet --clear --python "$python" "$VENV" >&2 || return 1
  VIRTUAL_ENV="$PWD/$VENV" "$UV" pip install --quiet './python[test]' >&2 || return 1
  # The same version number again: install this tree's code, not the copy the cache kept.
  VIRTUAL_ENV="$PWD/$VENV" "$UV" pip install --quiet --reinstall --no-deps ./python >&2
}

UV="$(find_uv)"
# uv reads no pip.conf: where it cannot fetch (a mirror only pip knows of), pip does the work.
if [ -z "$UV" ] || ! with_uv; then
  [ -z "$UV" ] || echo "python client: uv could not make the venv; pip makes it instead (slower)" >&2
  [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv --clear "$VENV"
  # A venv uv made has no pip of its own.
  "$VENV/bin/python" -m pip --version >/dev/null 2>&1 || "$VENV/bin/python" -m ensurepip --upgrade >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check './python[test]' >&2
  # The same version number again: install this tree's code, not the copy pip kept.
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps ./python >&2
fi
echo "$VENV/bin/python"
