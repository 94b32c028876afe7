"""Declared request fields: a body (or a nested object the worker defines) may carry only the fields
its route declares. An unknown name is a 400 naming it, with the closest declared name when one is
close (a typo such as `max_token` would otherwise silently take `max_tokens`' default).

The declaration is also what the handler reads through: `Fields.accept` returns a `Body` whose
reads of an undeclared name fail (a worker bug, 500), so a handler cannot read a field its route
would refuse, and `Body.read` lets the tests check that every declared field is read somewhere.
"""

from __future__ import annotations

import difflib
from typing import Any, Iterable

from .errors import BadRequest, WorkerError

#: Unknown names quoted in one message (a hostile body may carry thousands) and characters per name.
MAX_NAMED = 5
MAX_NAME_CHARS = 80


class Body(dict):  # type: ignore[type-arg]
    """A request object checked against its `Fields`; reads are confined to the declared names."""

    def __init__(self, data: dict[str, Any], fields: "Fields"):
        super().__init__(data)
        self.fields = fields
        self.read: set[str] = set()

    def _declared(self, key: str) -> None:
        if key not in self.fields.names:
            raise WorkerError(f"tcod_worker bug: the {self.fields.route} handler reads field `{key}`, which the "
                              f"route does not declare (tcod_worker/fields.py)")
        self.read.add(key)

    def get(self, key: str, default: Any = None) -> Any:
        self._declared(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self._declared(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self._declared(str(key))
        return super().__contains__(key)


class Fields:
    """The fields of one route's body (`where` empty) or of an object nested in it."""

    def __init__(self, route: str, names: Iterable[str]):
        self.route = route
        self.names = frozenset(names)

    def accept(self, body: Any, where: str = "") -> Body:
        """`body` as a `Body`, or a 400 naming its unknown fields. `where` is the object's path in the
        request (`rows[2]`), empty for the body itself."""
        if not isinstance(body, dict):
            if not where:
                raise BadRequest("request body must be a JSON object")
            raise BadRequest(f"{where} must be an object with fields {', '.join(sorted(self.names))}; "
                             f"got {type(body).__name__}")
        unknown = [k for k in body if k not in self.names]
        if unknown:
            raise BadRequest(self.refusal(unknown, where))
        return Body(body, self)

    def refusal(self, unknown: list[str], where: str) -> str:
        known = sorted(self.names)
        named = []  # (`path`, " (did you mean `x`?)" or "")
        for k in sorted(unknown)[:MAX_NAMED]:
            k = k if len(k) <= MAX_NAME_CHARS else k[:MAX_NAME_CHARS] + "…"
            close = difflib.get_close_matches(k, known, n=1)
            named.append((f"`{where + '.' if where else ''}{k}`", f" (did you mean `{close[0]}`?)" if close else ""))
        if len(unknown) == 1:
            msg = f"unknown field {named[0][0]} in the {self.route} body{named[0][1]}"
        else:
            more = f" and {len(unknown) - MAX_NAMED} more" if len(unknown) > MAX_NAMED else ""
            msg = f"unknown fields in the {self.route} body: {', '.join(n + h for n, h in named)}{more}"
        if len(unknown) > len(named) or any(not h for _n, h in named):
            msg += f"; {'the fields of ' + where if where else 'its fields'} are: {', '.join(known)}"
        return msg
