"""OpenTelemetry received: the OTLP/HTTP endpoint the daemon serves when ``otel.listen`` is set
(docs/otel.md). ``model`` holds what a request decodes to, whatever its encoding; ``decode``
turns protobuf and OTLP JSON bodies into it; ``events`` maps Claude Code's and Codex's records
and metric points to the log's events; ``receiver`` appends them and counts; ``http`` serves
``/v1/logs``, ``/v1/metrics`` and ``/v1/traces``. Only ``http`` and ``decode`` import the
optional packages (aiohttp, opentelemetry-proto), and only when the receiver starts."""
