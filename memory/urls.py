from django.urls import path

from memory import views

app_name = "memory"

urlpatterns = [
    path("", views.home, name="home"),
    path("facts/", views.facts, name="facts"),
    path("facts/<int:item_id>/history/", views.fact_history, name="fact_history"),
    path("facts/<int:item_id>/edit/", views.fact_edit, name="fact_edit"),
    path("facts/<int:item_id>/forget/", views.fact_forget, name="fact_forget"),
    path("facts/<int:item_id>/restore/", views.fact_restore, name="fact_restore"),
    path("core/", views.core, name="core"),
    path("core/<str:label>/edit/", views.core_edit, name="core_edit"),
    path("core/<str:label>/diff/<int:version>/", views.core_diff, name="core_diff"),
    path("core/<str:label>/rollback/<int:version>/", views.core_rollback, name="core_rollback"),
    path("ask/", views.ask, name="ask"),
    path("audit/", views.audit, name="audit"),
    path("jobs/", views.jobs, name="jobs"),
    path("jobs/retry/", views.jobs_retry, name="jobs_retry"),
    path("consolidation/", views.consolidation, name="consolidation"),
    path("consolidation/run/", views.consolidation_run, name="consolidation_run"),
    path("graph/", views.graph, name="graph"),
    path("graph.json", views.graph_json, name="graph_json"),
]
