"""The memory app's API: one router per area, all mounted at /api/v1."""

from memory.api.adjudications import router as adjudications_router
from memory.api.context import router as context_router
from memory.api.core import router as core_router
from memory.api.documents import router as documents_router
from memory.api.export import router as export_router
from memory.api.facts import router as facts_router
from memory.api.memory_tools import router as memory_tools_router
from memory.api.palace import router as palace_router
from memory.api.recall import router as recall_router
from memory.api.review import router as review_router
from memory.api.skills import router as skills_router
from memory.api.status import router as status_router
from memory.api.tools import router as tools_router
from memory.api.turns import router as turns_router

routers = [
    status_router,
    turns_router,
    core_router,
    memory_tools_router,
    context_router,
    facts_router,
]
routers.append(export_router)
routers.append(recall_router)
routers.append(tools_router)
routers.append(skills_router)
routers.append(adjudications_router)
routers.append(palace_router)
routers.append(documents_router)
routers.append(review_router)
