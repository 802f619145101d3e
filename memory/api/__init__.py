"""The memory app's API: one router per area, all mounted at /api/v1."""

from memory.api.status import router as status_router
from memory.api.turns import router as turns_router

routers = [status_router, turns_router]
