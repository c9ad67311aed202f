"""The XPlane schema (`xla/tsl/profiler/protobuf/xplane.proto`, Apache-2.0), for the protobuf
runtime to decode `*.xplane.pb` files.

Why not jax's `ProfileData`: it shows planes, lines, events and their stats, but not a plane's
event metadata, where the profiler stores the compiled HLO modules (the `/host:metadata` plane
keeps one metadata entry per program, its `hlo_proto` stat holding the serialized `xla.HloProto`).
Why not xprof's generated `xplane_pb2`: it comes with the whole profiler plugin. So the messages
are declared here, field for field as in the `.proto` (the fields this adapter reads; protobuf
keeps the others as unknown fields), and protobuf itself does the decoding. A `map<int64, M>`
field is, on the wire, a repeated entry message with `key = 1` and `value = 2`, and is declared
as one. `HloProto.hlo_module` is declared as bytes rather than as `xla.HloModuleProto`: the two
encode alike, and the bytes go to XLA unparsed. The schema needs no jax, so an import with a
cost-analysis sidecar runs without it.

    >>> space = XSpace()
    >>> space.planes.add(name="/host:metadata").event_metadata.add(key=7).value.name
    ''
    >>> XSpace.FromString(space.SerializeToString()).planes[0].event_metadata[0].key
    7
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "int64": _F.TYPE_INT64,
    "uint64": _F.TYPE_UINT64,
    "double": _F.TYPE_DOUBLE,
    "string": _F.TYPE_STRING,
    "bytes": _F.TYPE_BYTES,
}
_PACKAGE = "tensorflow.profiler"

# message -> (field, number, type, repeated); a type not in _SCALARS names a message here.
_MESSAGES: dict[str, tuple[tuple[str, int, str, bool], ...]] = {
    "XSpace": (("planes", 1, "XPlane", True), ("hostnames", 4, "string", True)),
    "XPlane": (
        ("id", 1, "int64", False),
        ("name", 2, "string", False),
        ("lines", 3, "XLine", True),
        ("event_metadata", 4, "EventMetadataEntry", True),
        ("stat_metadata", 5, "StatMetadataEntry", True),
        ("stats", 6, "XStat", True),
    ),
    "EventMetadataEntry": (("key", 1, "int64", False), ("value", 2, "XEventMetadata", False)),
    "StatMetadataEntry": (("key", 1, "int64", False), ("value", 2, "XStatMetadata", False)),
    "XLine": (
        ("id", 1, "int64", False),
        ("name", 2, "string", False),
        ("timestamp_ns", 3, "int64", False),
        ("events", 4, "XEvent", True),
    ),
    "XEvent": (
        ("metadata_id", 1, "int64", False),
        ("offset_ps", 2, "int64", False),
        ("duration_ps", 3, "int64", False),
        ("stats", 4, "XStat", True),
        ("num_occurrences", 5, "int64", False),
    ),
    "XStat": (
        ("metadata_id", 1, "int64", False),
        ("double_value", 2, "double", False),
        ("uint64_value", 3, "uint64", False),
        ("int64_value", 4, "int64", False),
        ("str_value", 5, "string", False),
        ("bytes_value", 6, "bytes", False),
        ("ref_value", 7, "uint64", False),
    ),
    "XEventMetadata": (
        ("id", 1, "int64", False),
        ("name", 2, "string", False),
        ("stats", 5, "XStat", True),
    ),
    "XStatMetadata": (("id", 1, "int64", False), ("name", 2, "string", False)),
    "HloProto": (("hlo_module", 1, "bytes", False),),
}
# The oneof groups of the .proto: which value an XStat holds, and whether an event is timed.
_ONEOFS = {
    "XStat": (
        "value",
        ("double_value", "uint64_value", "int64_value", "str_value", "bytes_value", "ref_value"),
    ),
    "XEvent": ("data", ("offset_ps", "num_occurrences")),
}


def _file() -> descriptor_pb2.FileDescriptorProto:
    file = descriptor_pb2.FileDescriptorProto(
        name="mpg/xplane.proto", package=_PACKAGE, syntax="proto3"
    )
    for name, fields in _MESSAGES.items():
        message = file.message_type.add(name=name)
        oneof_name, members = _ONEOFS.get(name, ("", ()))
        if oneof_name:
            message.oneof_decl.add(name=oneof_name)
        for field_name, number, kind, repeated in fields:
            field = message.field.add(name=field_name, number=number)
            field.label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
            if kind in _SCALARS:
                field.type = _SCALARS[kind]
            else:
                field.type = _F.TYPE_MESSAGE
                field.type_name = f".{_PACKAGE}.{kind}"
            if field_name in members:
                field.oneof_index = 0
    return file


_POOL = descriptor_pool.DescriptorPool()
_CLASSES = message_factory.GetMessageClassesForFiles([_POOL.Add(_file()).name], _POOL)
XSpace = _CLASSES[f"{_PACKAGE}.XSpace"]
HloProto = _CLASSES[f"{_PACKAGE}.HloProto"]
