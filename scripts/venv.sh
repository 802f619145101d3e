# Shared by ./run and ./test: make .venv and install the project into it when
# pyproject.toml changed since the last install.
ensure_venv() {
  local extras="$1"
  local python="${ENGRAM_PYTHON:-python3}"
  [ -x .venv/bin/python ] || "$python" -m venv .venv
  local stamp=".venv/.engram-installed${extras}"
  local want
  want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "Installing Engram${extras} into .venv ..."
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q ".${extras}"
    echo "$want" > "$stamp"
  fi
}
