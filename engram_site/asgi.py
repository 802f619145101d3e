"""The ASGI application: Django for everything, the MCP Streamable HTTP
endpoint at /mcp (behind the Bearer-key gate). Lifespan events go to the MCP
app, whose session manager needs them; Django has none."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "engram_site.settings")
# Under ASGI each request runs its view in a thread of its own, so a
# persistent database connection is never reused: it lingers until its
# thread is collected, and 48 concurrent clients took PostgreSQL past its
# max_connections within seconds ("sorry, too many clients already", a 500).
# As Django advises for ASGI, connections close at the end of each request.
os.environ["ENGRAM_DB_CONN_MAX_AGE"] = "0"
django_app = get_asgi_application()

from starlette.types import Receive, Scope, Send  # noqa: E402

from engram_site.middleware import AsgiBodyLimit  # noqa: E402
from memory.tools.mcp import BearerGate, http_app  # noqa: E402

limited_django = AsgiBodyLimit(django_app)
mcp_app = http_app()
gated_mcp = BearerGate(mcp_app)


async def application(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        await mcp_app(scope, receive, send)
        return
    path = scope.get("path", "")
    if scope["type"] == "http" and (path == "/mcp" or path == "/mcp/"):
        await gated_mcp({**scope, "path": "/mcp"}, receive, send)
        return
    await limited_django(scope, receive, send)
