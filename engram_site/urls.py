from django.contrib import admin
from django.urls import include, path

from engram_site.api import api

urlpatterns = [
    path("api/v1/", api.urls),
    path("admin/", admin.site.urls),
    path("i18n/", include("django.conf.urls.i18n")),
    path("", include("memory.urls")),
]
