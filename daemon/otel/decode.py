"""OTLP request bodies decoded: ``application/x-protobuf`` with the official opentelemetry-proto
messages, ``application/json`` by the OTLP JSON mapping (lowerCamelCase keys, int64 as a string
or a number, ids in hex, enums as numbers), each optionally gzip-compressed. Either gives the
same :class:`~daemon.otel.model.Decoded`; anything that is not a well-formed request of its
signal is :class:`~daemon.otel.model.Refused` with a 400 and a message saying what is wrong.

Only this module imports opentelemetry-proto (and protobuf), and only when the receiver starts.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from daemon.otel.model import Decoded, LogRecord, MetricPoint, Refused

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


def media_type(content_type: str | None) -> str:
    """The body's encoding from its Content-Type (parameters such as charset ignored)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media not in (PROTOBUF, JSON):
        raise Refused(415, f"unsupported content type {content_type or '(none)'!r}: send {PROTOBUF} or {JSON}")
    return media


def inflate(body: bytes, encoding: str | None, limit: int) -> bytes:
    """The body with its Content-Encoding (gzip, deflate or none) undone, refused past ``limit``
    bytes decompressed, so that a small compressed body cannot grow without bound."""
    name = (encoding or "identity").strip().lower()
    if name == "identity":
        return body
    if name not in ("gzip", "deflate"):
        raise Refused(415, f"unsupported content encoding {encoding!r}: send gzip, deflate or none")
    inflater = zlib.decompressobj(zlib.MAX_WBITS | 16 if name == "gzip" else zlib.MAX_WBITS)
    try:
        plain = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise Refused(400, f"body is not valid {name}: {exc}") from None
    if len(plain) > limit:
        raise Refused(413, f"body exceeds {limit} bytes once decompressed")
    if not inflater.eof:
        raise Refused(400, f"{name} body is truncated")
    return plain


def decode(signal: str, media: str, body: bytes) -> Decoded:
    """One request's content; ``signal`` is logs, metrics or traces."""
    try:
        if media == PROTOBUF:
            return _PROTOBUF[signal](body)
        try:
            document = json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise Refused(400, f"body is not valid JSON: {exc}") from None
        if not isinstance(document, dict):
            raise Refused(400, "an OTLP JSON body must be an object")
        return _JSON[signal](document)
    except RecursionError:
        raise Refused(400, "body is nested too deeply") from None
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        raise Refused(400, f"not an OTLP {signal} request: {exc}") from None


# --- protobuf ------------------------------------------------------------------------------------


def _parse(kind: Any, body: bytes, signal: str) -> Any:
    try:
        request = kind.FromString(body)
    except DecodeError:
        raise Refused(400, f"body is not a valid OTLP {signal} protobuf (truncated or garbage)") from None
    return request


def _pb_value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_pb_value(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _pb_value(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind)


def _pb_attributes(items: Any) -> dict[str, Any]:
    attributes = {}
    for kv in items:
        value = kv.value
        kind = value.WhichOneof("value")
        # Strings and ints are nearly every attribute: read them without a call of their own.
        if kind == "string_value":
            attributes[kv.key] = value.string_value
        elif kind == "int_value":
            attributes[kv.key] = value.int_value
        else:
            attributes[kv.key] = _pb_value(value)
    return attributes


def _pb_logs(body: bytes) -> Decoded:
    request = _parse(ExportLogsServiceRequest, body, "logs")
    logs = []
    for resource_logs in request.resource_logs:
        resource = _pb_attributes(resource_logs.resource.attributes)
        for scope_logs in resource_logs.scope_logs:
            scope = scope_logs.scope.name
            for record in scope_logs.log_records:
                logs.append(
                    LogRecord(
                        resource,
                        scope,
                        record.time_unix_nano,
                        record.observed_time_unix_nano,
                        record.severity_number,
                        _pb_value(record.body),
                        _pb_attributes(record.attributes),
                        record.trace_id.hex(),
                        record.span_id.hex(),
                    )
                )
    return Decoded(logs=logs)


def _pb_metrics(body: bytes) -> Decoded:
    request = _parse(ExportMetricsServiceRequest, body, "metrics")
    points = []
    for resource_metrics in request.resource_metrics:
        resource = _pb_attributes(resource_metrics.resource.attributes)
        for scope_metrics in resource_metrics.scope_metrics:
            scope = scope_metrics.scope.name
            for metric in scope_metrics.metrics:
                shape = metric.WhichOneof("data")
                if shape is None:
                    continue
                data = getattr(metric, shape)
                temporality = getattr(data, "aggregation_temporality", 0)
                for point in data.data_points:
                    if shape in ("sum", "gauge"):
                        which = point.WhichOneof("value")
                        value: float | int = getattr(point, which) if which else 0
                        count = 0
                    else:
                        value, count = point.sum, point.count
                    points.append(
                        MetricPoint(
                            resource,
                            scope,
                            metric.name,
                            metric.unit,
                            shape,
                            temporality,
                            _pb_attributes(point.attributes),
                            point.start_time_unix_nano,
                            point.time_unix_nano,
                            value,
                            count,
                        )
                    )
    return Decoded(points=points)


def _pb_traces(body: bytes) -> Decoded:
    request = _parse(ExportTraceServiceRequest, body, "traces")
    spans = sum(len(scope.spans) for resource in request.resource_spans for scope in resource.scope_spans)
    return Decoded(spans=spans)


_PROTOBUF: dict[str, Callable[[bytes], Decoded]] = {"logs": _pb_logs, "metrics": _pb_metrics, "traces": _pb_traces}


# --- JSON ----------------------------------------------------------------------------------------


def _get(parent: dict[str, Any], camel: str, snake: str) -> Any:
    """A field by its JSON name or its proto name (requests may use either)."""
    return parent.get(camel, parent.get(snake))


def _list(parent: dict[str, Any], camel: str, snake: str) -> list[Any]:
    """A repeated field, by its JSON name or its proto name (both are allowed in requests)."""
    found = parent.get(camel, parent.get(snake))
    if found is None:
        return []
    if not isinstance(found, list):
        raise TypeError(f"{camel} must be an array")
    return found


def _object(parent: dict[str, Any], camel: str, snake: str) -> dict[str, Any]:
    found = parent.get(camel, parent.get(snake))
    if found is None:
        return {}
    if not isinstance(found, dict):
        raise TypeError(f"{camel} must be an object")
    return found


def _int(value: Any, name: str) -> int:
    """An int64 as the JSON mapping writes it (a string) or as JavaScript exporters do (a number)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, str, float)):
        raise TypeError(f"{name} must be an integer")
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"{name} must be an integer, got {value}")
        return int(value)
    return int(value)


def _json_value(value: Any) -> Any:
    if not isinstance(value, dict):
        raise TypeError("an attribute value must be an AnyValue object")
    for kind, found in value.items():
        if kind in ("stringValue", "string_value"):
            return found if isinstance(found, str) else str(found)
        if kind in ("intValue", "int_value"):
            return _int(found, "intValue")
        if kind in ("doubleValue", "double_value"):
            return float(found)  # "NaN" and "Infinity" arrive as strings
        if kind in ("boolValue", "bool_value"):
            return found if isinstance(found, bool) else str(found).lower() == "true"
        if kind in ("arrayValue", "array_value"):
            return [_json_value(item) for item in _list(found, "values", "values")]
        if kind in ("kvlistValue", "kvlist_value"):
            return _json_attributes(_list(found, "values", "values"))
        if kind in ("bytesValue", "bytes_value"):
            import base64

            return base64.b64decode(found).hex()
    return None


def _json_attributes(items: list[Any]) -> dict[str, Any]:
    attributes = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            raise TypeError("an attribute must be an object with a string key")
        value = item.get("value")
        attributes[item["key"]] = None if value is None else _json_value(value)
    return attributes


def _json_resource(parent: dict[str, Any]) -> dict[str, Any]:
    return _json_attributes(_list(_object(parent, "resource", "resource"), "attributes", "attributes"))


def _json_scope(parent: dict[str, Any]) -> str:
    name = _object(parent, "scope", "scope").get("name", "")
    return name if isinstance(name, str) else ""


def _hex(value: Any) -> str:
    return value.lower() if isinstance(value, str) else ""


def _json_logs(document: dict[str, Any]) -> Decoded:
    logs = []
    for resource_logs in _list(document, "resourceLogs", "resource_logs"):
        resource = _json_resource(resource_logs)
        for scope_logs in _list(resource_logs, "scopeLogs", "scope_logs"):
            scope = _json_scope(scope_logs)
            for record in _list(scope_logs, "logRecords", "log_records"):
                body = record.get("body")
                logs.append(
                    LogRecord(
                        resource,
                        scope,
                        _int(_get(record, "timeUnixNano", "time_unix_nano"), "timeUnixNano"),
                        _int(
                            _get(record, "observedTimeUnixNano", "observed_time_unix_nano"),
                            "observedTimeUnixNano",
                        ),
                        _severity(_get(record, "severityNumber", "severity_number")),
                        None if body is None else _json_value(body),
                        _json_attributes(_list(record, "attributes", "attributes")),
                        _hex(_get(record, "traceId", "trace_id")),
                        _hex(_get(record, "spanId", "span_id")),
                    )
                )
    return Decoded(logs=logs)


def _severity(value: Any) -> int:
    # An enum in OTLP JSON is its number; protobuf's own JSON printer writes its name.
    if isinstance(value, str) and value.startswith("SEVERITY_NUMBER_"):
        from opentelemetry.proto.logs.v1.logs_pb2 import SeverityNumber

        try:
            return int(SeverityNumber.Value(value))
        except ValueError:
            return 0
    return _int(value, "severityNumber") if isinstance(value, (int, float)) else 0


_TEMPORALITIES = {"AGGREGATION_TEMPORALITY_DELTA": 1, "AGGREGATION_TEMPORALITY_CUMULATIVE": 2}


def _temporality(value: Any) -> int:
    if isinstance(value, str) and value in _TEMPORALITIES:
        return _TEMPORALITIES[value]
    return _int(value, "aggregationTemporality")


_SHAPES = {
    "sum": "sum",
    "gauge": "gauge",
    "histogram": "histogram",
    "exponentialHistogram": "exponential_histogram",
    "exponential_histogram": "exponential_histogram",
    "summary": "summary",
}


def _json_metrics(document: dict[str, Any]) -> Decoded:
    points = []
    for resource_metrics in _list(document, "resourceMetrics", "resource_metrics"):
        resource = _json_resource(resource_metrics)
        for scope_metrics in _list(resource_metrics, "scopeMetrics", "scope_metrics"):
            scope = _json_scope(scope_metrics)
            for metric in _list(scope_metrics, "metrics", "metrics"):
                shape = next((_SHAPES[key] for key in metric if key in _SHAPES), None)
                if shape is None:
                    continue
                data = metric[next(key for key in metric if key in _SHAPES)]
                if not isinstance(data, dict):
                    raise TypeError(f"metric {metric.get('name')!r}: {shape} must be an object")
                temporality = _temporality(_get(data, "aggregationTemporality", "aggregation_temporality"))
                for point in _list(data, "dataPoints", "data_points"):
                    if shape in ("sum", "gauge"):
                        raw = _get(point, "asDouble", "as_double")
                        value: float | int = (
                            float(raw) if raw is not None else _int(_get(point, "asInt", "as_int"), "asInt")
                        )
                        count = 0
                    else:
                        value = float(point.get("sum") or 0)
                        count = _int(point.get("count"), "count")
                    points.append(
                        MetricPoint(
                            resource,
                            scope,
                            str(metric.get("name", "")),
                            str(metric.get("unit", "")),
                            shape,
                            temporality,
                            _json_attributes(_list(point, "attributes", "attributes")),
                            _int(_get(point, "startTimeUnixNano", "start_time_unix_nano"), "startTimeUnixNano"),
                            _int(_get(point, "timeUnixNano", "time_unix_nano"), "timeUnixNano"),
                            value,
                            count,
                        )
                    )
    return Decoded(points=points)


def _json_traces(document: dict[str, Any]) -> Decoded:
    spans = 0
    for resource_spans in _list(document, "resourceSpans", "resource_spans"):
        for scope_spans in _list(resource_spans, "scopeSpans", "scope_spans"):
            spans += len(_list(scope_spans, "spans", "spans"))
    return Decoded(spans=spans)


_JSON: dict[str, Callable[[dict[str, Any]], Decoded]] = {
    "logs": _json_logs,
    "metrics": _json_metrics,
    "traces": _json_traces,
}
