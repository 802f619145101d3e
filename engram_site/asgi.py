"""The ASGI application: Django for everything, the MCP Streamable HTTP
endpoint at /mcp (behind the Bearer-key gate). Lifespan events go to the MCP
app, whose session manager needs them; Django has none.

Django runs as its WSGI application on a fixed pool of ENGRAM_WEB_THREADS
threads per worker process, not through Django's ASGI handler. That handler
runs each request's synchronous code (all of Engram's views) on a thread of
its own, so every request opened a new database connection, which the thread
took with it when it ended: CONN_MAX_AGE could keep nothing, and each request
paid 1 ms (SQLite) to 6 ms (PostgreSQL) for a connection, plus a thread. On
pool threads the connection is kept between requests as under a WSGI server;
`manage.py bench_http` went from 40 to 110 recalls a second on 2 cores."""

import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "engram_site.settings")
wsgi_app = get_wsgi_application()  # sets Django up: settings can be read from here on

from engram_site.wsgi_bridge import WsgiBridge  # noqa: E402

# Django answers an iterable of bytes; its stubs name the response class.
django_app = WsgiBridge(wsgi_app, workers=settings.WEB_THREADS)  # type: ignore[arg-type]

from starlette.types import Receive, Scope, Send  # noqa: E402

from engram_site.middleware import AsgiBodyLimit  # noqa: E402
from engram_site.serving import KeepAliveLimit  # noqa: E402
from memory.tools.mcp import BearerGate, http_app  # noqa: E402

limited_django = AsgiBodyLimit(django_app)
mcp_app = http_app()
gated_mcp = BearerGate(mcp_app)


async def _route(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        await mcp_app(scope, receive, send)
        return
    path = scope.get("path", "")
    if scope["type"] == "http" and (path == "/mcp" or path == "/mcp/"):
        await gated_mcp({**scope, "path": "/mcp"}, receive, send)
        return
    await limited_django(scope, receive, send)


# Outermost: a connection's last answer says so, whichever app gave it.
application = KeepAliveLimit(_route, requests=settings.KEEPALIVE_REQUESTS)
