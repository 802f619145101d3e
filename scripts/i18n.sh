#!/usr/bin/env bash
# Bring the dashboard's catalogues up to date with the sources:
#   1. re-extract every msgid of the project's own code and templates into
#      locale/{zh_Hans,ru}/LC_MESSAGES/django.po (new ones arrive empty, changed
#      ones fuzzy; translated entries are kept),
#   2. list per language what lacks a translation (manage.py i18n_check),
#   3. compile the .mo files, which are committed: ./run needs no gettext.
# Translate the listed entries in the .po files, drop their "fuzzy" flag and
# run this again until step 2 reports nothing; commit the .po and .mo files.
# Needs GNU gettext (apt-get install gettext). Deterministic: no locations by
# line, so re-running on unchanged sources changes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${ENGRAM_PYTHON_BIN:-}"
if [ -z "$python" ]; then
  if [ -x .venv/bin/python ]; then python=.venv/bin/python; else python=python3; fi
fi
export ENGRAM_DATA_DIR="${ENGRAM_DATA_DIR:-$(mktemp -d)}"

# The project's sources only: not the virtualenv, tests, data or build output.
ignores=(--ignore=.venv --ignore='.venv/*' --ignore=tests --ignore=staticfiles --ignore=data
  --ignore=build --ignore=bench-out --ignore=control)
"$python" manage.py makemessages -l zh_Hans -l ru --domain=django --add-location=file \
  --no-obsolete "${ignores[@]}"
status=0
"$python" manage.py i18n_check --no-mo || status=$?
"$python" manage.py compilemessages -l zh_Hans -l ru "${ignores[@]}"
exit "$status"
