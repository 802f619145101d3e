"""Every operation of the OpenAPI schema, fuzzed by schemathesis against the
WSGI app with a real key: no server error, and every answer (status, content
type, body) as the schema documents it.

Bounded to stay near a minute per database: few examples per operation,
deterministic generation (the same cases every run, so a failure is
reproducible and CI does not flake on a new random draw), no shrinking."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode
from schemathesis.specs.openapi import checks

from engram_site.api import api
from engram_site.threads import close_all_connections
from engram_site.wsgi import application
from memory.services.spaces import create_api_key

MAX_EXAMPLES = 6
# Checked: no server error, documented status codes, content types, headers
# and bodies. Not checked, on purpose: that every schema-invalid input is
# refused (pydantic's lax mode reads "3" as 3 and epoch seconds as a date,
# as the API always has) and that every schema-valid input is accepted
# (business rules such as "nothing to undo" or "too little to store" answer
# 422 and cannot be written in a schema).
LENIENT = [checks.negative_data_rejection, checks.positive_data_acceptance]

schema = schemathesis.openapi.from_dict(api.get_openapi_schema())
schema.app = application
schema.config.generation.update(
    modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
    max_examples=MAX_EXAMPLES,
    deterministic=True,
    no_shrink=True,
    # Unknown query parameters are ignored, as by most HTTP APIs; sending
    # them is not a schema violation worth a 4xx.
    allow_extra_parameters=True,
    # The key is the fixture's, a valid one: missing, unknown and revoked
    # keys are the cross-space matrix's business (test_cross_space_matrix).
    with_security_parameters=False,
    # A NUL in a header is refused by the WSGI layer before Engram sees it.
    exclude_header_characters="\x00\r\n",
)


@pytest.fixture
def auth_headers(db) -> Iterator[dict[str, str]]:  # type: ignore[no-untyped-def]
    _, key = create_api_key(space_name="fuzzed")
    # The WSGI handler closes the database connection when a request ends,
    # which would close the test's transaction; Django's own test client
    # disconnects the same signal handlers while it calls the app.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield {"Authorization": f"Bearer {key}"}
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
        # The app's helper threads opened connections of their own while
        # serving the cases; close them, as a server's request end would.
        close_all_connections()


@pytest.mark.filterwarnings("ignore::UserWarning")
@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_every_operation_conforms(case, auth_headers):  # type: ignore[no-untyped-def]
    case.call_and_validate(headers=auth_headers, excluded_checks=LENIENT)
