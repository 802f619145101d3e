from django.urls import path

from memory.dashboard import ask, core, facts, graph, ops, review, skills

app_name = "memory"

urlpatterns = [
    path("", facts.home, name="home"),
    path("facts/", facts.facts, name="facts"),
    path("facts/<int:item_id>/history/", facts.fact_history, name="fact_history"),
    path("facts/<int:item_id>/edit/", facts.fact_edit, name="fact_edit"),
    path("facts/<int:item_id>/forget/", facts.fact_forget, name="fact_forget"),
    path("facts/<int:item_id>/restore/", facts.fact_restore, name="fact_restore"),
    path("core/", core.core, name="core"),
    path("core/<str:label>/edit/", core.core_edit, name="core_edit"),
    path("core/<str:label>/diff/<int:version>/", core.core_diff, name="core_diff"),
    path("core/<str:label>/rollback/<int:version>/", core.core_rollback, name="core_rollback"),
    path("ask/", ask.ask, name="ask"),
    path("audit/", ops.audit, name="audit"),
    path("jobs/", ops.jobs, name="jobs"),
    path("jobs/retry/", ops.jobs_retry, name="jobs_retry"),
    path("consolidation/", ops.consolidation, name="consolidation"),
    path("consolidation/run/", ops.consolidation_run, name="consolidation_run"),
    path("review/", review.review, name="review"),
    path("review/<int:item_id>/release/", review.release, name="review_release"),
    path("review/<int:item_id>/forget/", review.discard, name="review_forget"),
    path(
        "review/<int:item_id>/<str:decision>/",
        review.decide,
        name="review_decide",
    ),
    path("skills/", skills.skills, name="skills"),
    path("skills/<int:skill_id>/<str:action>/", skills.skill_action, name="skill_action"),
    path("ops/", ops.ops, name="ops"),
    path("ops/backfill/estimate/", ops.backfill_estimate, name="backfill_estimate"),
    path("ops/backfill/run/", ops.backfill_run, name="backfill_run"),
    path("ops/backfill/<int:job_id>/", ops.backfill_progress, name="backfill_progress"),
    path("ops/backfill/<int:job_id>/<str:action>/", ops.backfill_control, name="backfill_control"),
    path("ops/environment/refresh/", ops.environment_refresh, name="environment_refresh"),
    path("ops/test/<str:target>/", ops.test_connection, name="test_connection"),
    path("graph/", graph.graph, name="graph"),
    path("graph.json", graph.graph_json, name="graph_json"),
]
