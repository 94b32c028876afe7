"""The installed Trinity-RFT's config dataclasses, reachable from Config through fields whose type is
a dataclass (or a list, mapping or Optional of one): per dataclass, each field with whether it
takes None (Optional[...] or Any). Printed as JSON: {ClassName: {field: optional}}."""
import dataclasses
import json
import typing

from trinity.common.config import Config


def optional(t):
    return t is typing.Any or (typing.get_origin(t) is typing.Union and type(None) in typing.get_args(t))


def dataclasses_in(t):
    if dataclasses.is_dataclass(t):
        return [t]
    return [c for a in typing.get_args(t) for c in dataclasses_in(a)]


out = {}
todo = [Config]
while todo:
    cls = todo.pop()
    if cls.__name__ in out:
        continue
    hints = typing.get_type_hints(cls)
    out[cls.__name__] = {f.name: optional(hints[f.name]) for f in dataclasses.fields(cls)}
    for f in dataclasses.fields(cls):
        todo.extend(dataclasses_in(hints[f.name]))
print(json.dumps(out, sort_keys=True))
