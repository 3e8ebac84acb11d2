"""Helpers for the distributed tests: the optional packages, a local S3 server, a Ray cluster.

The ``distributed`` extra (ray, fsspec, s3fs; moto for the S3 server) is installed by
``tox -e tests``; there ``T3D_AUDIT_REQUIRE_DISTRIBUTED=1`` (set by ``.ci/run``) makes a
missing package a failure instead of a skip.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests._extras import need

BUCKET = "t3d-audit-test"


@contextmanager
def moto_s3(monkeypatch: pytest.MonkeyPatch | None = None) -> Iterator[str]:
    """A moto S3 server on 127.0.0.1 (random port) with bucket ``BUCKET``; yields
    ``s3://BUCKET`` and points ``$T3D_AUDIT_STORE_OPTIONS`` at the server meanwhile."""
    need("s3fs")
    need("moto")
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    options = {"key": "test", "secret": "test",
               "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"}}  # fmt: skip
    old = os.environ.get("T3D_AUDIT_STORE_OPTIONS")
    os.environ["T3D_AUDIT_STORE_OPTIONS"] = json.dumps(options)
    try:
        import boto3

        boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="test",
                     aws_secret_access_key="test", region_name="us-east-1").create_bucket(Bucket=BUCKET)  # fmt: skip
        yield f"s3://{BUCKET}"
    finally:
        if old is None:
            os.environ.pop("T3D_AUDIT_STORE_OPTIONS", None)
        else:
            os.environ["T3D_AUDIT_STORE_OPTIONS"] = old
        server.stop()
