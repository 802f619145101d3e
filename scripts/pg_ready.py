"""Exit 0 if a PostgreSQL server answers at the URL given (used by ./test)."""

import sys

import psycopg

try:
    url = (
        sys.argv[1].replace("/engram", "/postgres")
        if sys.argv[1].endswith("/engram")
        else sys.argv[1]
    )
    with psycopg.connect(url, connect_timeout=3):
        pass
except Exception:
    sys.exit(1)
