"""The server's routes, one module per surface, each a function of the app's `ServerState`
that returns its Starlette routes (`..app.create_app` assembles them):

    streams.py   POST /v1/stream, GET /v1/streams/{response_id}   the server's own wire
    models.py    GET /v1/models                                   the served model ids
    health.py    GET /healthz                                     for probes, no key
    metrics.py   GET /metrics                                     Prometheus text, no key
    gateway.py   the providers' own APIs, inbound (`Gateway`)     docs/gateway.md
"""
