"""The export's operation (docs/protocol.md): ``export.otel``, sessions sent once to a collector
as OpenTelemetry traces, with progress. The forwarder has no op: it runs with the daemon when
``export.otlp.endpoint`` is set, and ``status`` shows it."""

from __future__ import annotations

from typing import Any

from daemon.export.service import Exporter, ExportRequest
from daemon.rpc.registry import Call, Ops

OPS = Ops(Exporter)


@OPS.op("export.otel", ExportRequest, progress=True)
async def export_otel(exporter: Exporter, request: ExportRequest, call: Call) -> dict[str, Any]:
    result = await exporter.export(request, call.progress)
    await call.progress_sent()
    return result
