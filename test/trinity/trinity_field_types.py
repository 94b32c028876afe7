"""The installed Trinity-RFT's config dataclasses, reachable from Config through fields whose type is
a dataclass (or a list, mapping or Optional of one): per dataclass, each field's type, default,
whether it takes None and the dataclass of its items, as targets/trinity/fields.ts writes them.
Printed as JSON: {ClassName: {field: {"type": …, "default": …, "optional": …, "items": …}}}, the type
"int", "float", "str", "bool", "list", "dict", "any", {"enum": Name} or {"section": Name}; the default
{"value": …} (an enum member as its value), {"section": true} (default_factory=a dataclass) or
{"required": true}; optional: Optional[…] or Any; items: the dataclass of a list's or dict's items,
else null; itemType: the type ("int", "float", "str", "bool") of the items of a default list or dict
that holds some, else null."""
import dataclasses
import enum
import json
import typing

from trinity.common.config import Config


def dataclasses_in(t):
    if dataclasses.is_dataclass(t):
        return [t]
    return [c for a in typing.get_args(t) for c in dataclasses_in(a)]


def type_of(t):
    if t is typing.Any:
        return "any"
    args = [a for a in typing.get_args(t) if a is not type(None)]
    if typing.get_origin(t) is typing.Union and len(args) == 1:
        t = args[0]
    origin = typing.get_origin(t) or t
    if dataclasses.is_dataclass(origin):
        return {"section": origin.__name__}
    if isinstance(origin, type) and issubclass(origin, enum.Enum):
        return {"enum": origin.__name__}
    if origin in (list, typing.List):
        return "list"
    if origin in (dict, typing.Dict):
        return "dict"
    return {int: "int", float: "float", str: "str", bool: "bool"}.get(origin, repr(t))


def optional(t):
    return t is typing.Any or (typing.get_origin(t) is typing.Union and type(None) in typing.get_args(t))


def items_of(t):
    args = [a for a in typing.get_args(t) if a is not type(None)]
    if typing.get_origin(t) is typing.Union and len(args) == 1:
        t = args[0]
    if (typing.get_origin(t) or t) not in (list, dict):
        return None
    inner = [a for a in typing.get_args(t) if dataclasses.is_dataclass(a)]
    return inner[0].__name__ if inner else None


def item_type_of(f):
    v = f.default if f.default is not dataclasses.MISSING else f.default_factory() if f.default_factory is not dataclasses.MISSING else None
    items = list(v.values()) if isinstance(v, dict) else v if isinstance(v, list) else []
    types = {type(x).__name__ for x in items}
    return types.pop() if len(types) == 1 and not dataclasses.is_dataclass(items[0]) else None


def default_of(f):
    if f.default is not dataclasses.MISSING:
        v = f.default
    elif f.default_factory is not dataclasses.MISSING:
        v = f.default_factory()
        if dataclasses.is_dataclass(v):
            return {"section": True}
    else:
        return {"required": True}
    return {"value": v.value if isinstance(v, enum.Enum) else v}


out = {}
todo = [Config]
while todo:
    cls = todo.pop()
    if cls.__name__ in out:
        continue
    hints = typing.get_type_hints(cls)
    out[cls.__name__] = {
        f.name: {"type": type_of(hints[f.name]), "default": default_of(f), "optional": optional(hints[f.name]), "items": items_of(hints[f.name]), "itemType": item_type_of(f)}
        for f in dataclasses.fields(cls)
    }
    for f in dataclasses.fields(cls):
        todo.extend(dataclasses_in(hints[f.name]))
print(json.dumps(out, sort_keys=True))
