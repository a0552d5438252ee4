"""AG-UI (the Agent-User Interaction protocol, @ag-ui/core 1.0), as a front-end wire of the
server: an AG-UI front-end (`@ag-ui/client`'s `HttpAgent`, CopilotKit) runs a turn against
`modelstream serve` as it would against any AG-UI agent.

    POST /v1/stream/ag-ui   a run: its `RunAgentInput` (`inbound.py`; the served model is
                            `forwardedProps.model`), answered as AG-UI events (`writer.py`)

The server is the agent's model, not a tool runner: the tool calls a turn asks for end the run
with them pending (`RUN_FINISHED` names them), for the front-end to answer with tool messages
in its next run. Only the server answers in this wire: no provider speaks it, so it has no
upstream half.
"""

from __future__ import annotations

from ..common.gateway import GatewayRoute, GatewayWire, bearer_key
from .inbound import decode_request
from .writer import error_body, final_body, writer

NAME = "ag-ui"
ROUTES = (GatewayRoute("POST", "/v1/stream/ag-ui", "generate", stream=True),)

GATEWAY = GatewayWire(
    routes=ROUTES,
    read_key=bearer_key,
    decode_request=decode_request,
    writer=writer,
    final_body=final_body,
    error_body=error_body,
)

__all__ = ["GATEWAY", "NAME", "ROUTES"]
