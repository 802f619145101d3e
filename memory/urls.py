from django.urls import path

from memory.dashboard import (
    ask,
    beliefs,
    core,
    entities,
    episodes,
    facts,
    graph,
    library,
    log,
    ops,
    today,
)

app_name = "memory"

urlpatterns = [
    path("", today.today, name="today"),
    path("library/", library.library, name="library"),
    path("library/batch/", library.batch, name="library_batch"),
    path("library/forget-query/", library.forget_query, name="library_forget_query"),
    path("library/wipe/", library.wipe, name="library_wipe"),
    path("facts/", library.facts_redirect, name="facts"),
    path("facts/<int:item_id>/history/", facts.fact_history, name="fact_history"),
    path("facts/<int:item_id>/edit/", facts.fact_edit, name="fact_edit"),
    path("facts/<int:item_id>/forget/", facts.fact_forget, name="fact_forget"),
    path("facts/<int:item_id>/restore/", facts.fact_restore, name="fact_restore"),
    path("core/", core.core, name="core"),
    path("core/<str:label>/edit/", core.core_edit, name="core_edit"),
    path("core/<str:label>/diff/<int:version>/", core.core_diff, name="core_diff"),
    path("core/<str:label>/rollback/<int:version>/", core.core_rollback, name="core_rollback"),
    path("ask/", ask.ask, name="ask"),
    path("log/", log.log, name="log"),
    path("audit/", log.audit_redirect, name="audit"),
    path("jobs/", ops.jobs, name="jobs"),
    path("jobs/retry/", ops.jobs_retry, name="jobs_retry"),
    path("consolidation/", ops.consolidation, name="consolidation"),
    path("consolidation/run/", ops.consolidation_run, name="consolidation_run"),
    path("graph/", graph.graph, name="graph"),
    path("graph.json", graph.graph_json, name="graph_json"),
    path("episodes/", episodes.episodes, name="episodes"),
    path("episodes/<int:session_id>/", episodes.episode, name="episode"),
    path("entities/", entities.entities, name="entities"),
    path("entities/<int:entity_id>/", entities.entity, name="entity"),
    path("beliefs/", beliefs.beliefs, name="beliefs"),
]
