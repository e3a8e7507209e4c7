"""OpenTelemetry sent: the log as GenAI traces for a collector (docs/otel.md, "Export"). ``spans``
holds what is sent and how its ids derive from the log's; ``calls`` builds the request and
tool-call spans, ``agents`` the agent spans; ``encode`` writes them as OTLP protobuf and
``collector`` posts them and tries again; ``service`` is `toka export otel`, ``forwarder`` the
daemon's continuous export with its cursor in the store. Only ``encode`` and ``collector`` import
the optional packages (opentelemetry-proto, aiohttp), and only when something is sent."""
