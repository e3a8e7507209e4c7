"""Spans as an OTLP ``ExportTraceServiceRequest`` in protobuf, built with the official
opentelemetry-proto package (the ``otel`` extra, imported here only), and the collector's
answer read back: how many spans it rejected (``partial_success``)."""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Status
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan

from daemon.export.spans import AttributeValue, Span
from daemon.version import VERSION

SERVICE = "toka"


def _value(value: AttributeValue) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    return AnyValue(string_value=value)


def key_values(attributes: dict[str, AttributeValue]) -> list[KeyValue]:
    """Attributes as OTLP's key-value list (bool, int, float or string values)."""
    return [KeyValue(key=key, value=_value(value)) for key, value in attributes.items()]


def _span(span: Span) -> ProtoSpan:
    status = Status(code=Status.STATUS_CODE_ERROR, message=span.error) if span.error is not None else Status()
    return ProtoSpan(
        trace_id=span.trace_id,
        span_id=span.span_id,
        parent_span_id=span.parent_id,
        name=span.name,
        kind=span.kind,  # type: ignore[arg-type]
        start_time_unix_nano=span.start_ns,
        end_time_unix_nano=span.end_ns,
        attributes=key_values(span.attributes),
        events=[
            ProtoSpan.Event(time_unix_nano=e.time_ns, name=e.name, attributes=key_values(e.attributes))
            for e in span.events
        ],
        status=status,
    )


def encode_spans(spans: Sequence[Span]) -> bytes:
    """One request holding ``spans``, under toka's resource and scope."""
    request = ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                resource=Resource(attributes=key_values({"service.name": SERVICE, "service.version": VERSION})),
                scope_spans=[
                    ScopeSpans(scope=InstrumentationScope(name=SERVICE, version=VERSION), spans=map(_span, spans))
                ],
            )
        ]
    )
    return bytes(request.SerializeToString())


def rejected_spans(body: bytes) -> tuple[int, str]:
    """The spans a collector's protobuf answer says it rejected, and why; (0, "") for an empty
    or unreadable answer (a 2xx is success whatever its body)."""
    answer = ExportTraceServiceResponse()
    try:
        answer.ParseFromString(body)
    except DecodeError:  # a body that is not the answer's message says nothing more
        return 0, ""
    return int(answer.partial_success.rejected_spans), answer.partial_success.error_message
