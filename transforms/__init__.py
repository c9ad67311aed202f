"""Pure transforms: functions of Arrow tables (and the Beam PTransforms that apply them).

Nothing in this package reads files, parses arguments or touches a database file; `pipelines/`
wires I/O around them.
"""
