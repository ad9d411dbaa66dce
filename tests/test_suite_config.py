"""The test suite's own set-up: what `make test` relies on to be as fast as it is."""
from __future__ import annotations

import os

import pytest


@pytest.mark.xdist_group("transformers")
def test_xdist_groups_run_on_one_worker(request):
    """`--dist loadgroup` keeps each xdist_group on one worker (one Chromium, one transformers
    import, one SmolLM2 load); xdist does it by suffixing the node id with "@group". When that
    stops taking effect (pytest 9 with pytest-xdist 3.8), nothing fails but every group is split."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("not under pytest-xdist (make test runs -n 2): no worker to group on")
    assert request.node.nodeid.endswith("@transformers"), request.node.nodeid
