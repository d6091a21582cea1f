"""Validation of SONiC ``config_db.json`` documents against SONiC's own YANG models, through libyang.

SONiC publishes one YANG module per feature (``sonic-port``, ``sonic-interface``, ...), each with one top-level
container, one child container per Config DB table and, inside it, ``<TABLE>_LIST`` lists keyed by the
``|``-separated parts of the Config DB key (or plain containers such as ``DEVICE_METADATA/localhost``).  Config DB
holds every value as a string, while libyang 2 parses RFC 7951 JSON, where int8..uint32 values must be JSON numbers
and booleans JSON booleans.  So this module:

1. loads every module of the models folder into one libyang context and indexes, once (`yang_schema`), how each
   table is modelled and how each of its fields is encoded;
2. translates a Config DB dict into RFC 7951 JSON text, one list entry (and one map pair) per line, so that a parse
   error's line number names the Config DB entry even when libyang's data path is still incomplete;
3. parses and validates it with libyang and turns each error into a :class:`YangIssue`.

libyang 2.1 stops at the first error.  To report every problem, the validator drops the offending field (or entry)
and validates again, until the document is clean or :attr:`SonicYangValidator.max_issues` issues were found; errors
that only follow from a dropped entry (a reference to a port whose own value was bad) are not reported again.

The models folder is found by `find_yang_dir`, the lookup of `teton.targets.reference` over `YANG_MODELS`, in the
order docs/checks.md documents: ``yang_dir`` (``--yang-dir``) or the ``TETON_SONIC_YANG_DIR`` environment variable;
``sonic-yang-models/yang`` in the shared folder beside the repository; the pinned upstream commit that
``scripts/setup`` fetches where the network allows.  A validator is not thread-safe (one libyang context, and
libyang's logging is process-wide): build one per thread.

Known libyang 2.1.30 leak: every evaluation of a ``must`` that compares a union-with-leafref leaf to a literal
(PFC_WD's ``../ifname != 'GLOBAL'``, ACL_TABLE's ``type = 'CTRLPLANE'``) leaks about 220 bytes inside libyang
(``set_comp_canonize`` drops a value whose store returned LY_EINCOMPLETE); destroying the context does not reclaim
it.  That is about 13 KB per validate() of a 128-port RoCE rack switch; a long-running service should validate in a
worker process that is recycled now and then.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import libyang

from teton.findings import TetonError
from teton.targets.reference import ReferenceData
from teton.targets.sonic.yang_schema import Shape, Table, enc_string, index_tables, quote

# The sonic-buildimage commit whose src/sonic-yang-models teton is tested with; scripts/setup fetches it.
PINNED_COMMIT = "086b03bd"
ROW_CACHE_MAX = 200_000     # rows whose translation a validator keeps (`SonicYangValidator._rows`)


def _has_models(folder: Path) -> bool:
    return folder.is_dir() and any(folder.glob("*.yang"))


YANG_MODELS = ReferenceData(
    name="sonic-yang-models", label="SONiC YANG models", env="TETON_SONIC_YANG_DIR", option="--yang-dir",
    shared_subdir="sonic-yang-models/yang", usable=_has_models, lacks="holds no .yang files",
    expect="point it at sonic-buildimage's src/sonic-yang-models/yang-models",
    fetch_hint=f"run scripts/setup where GitHub is reachable (it fetches sonic-buildimage@{PINNED_COMMIT} into "
               "{cached.parent})",
    cache_subdir=f"sonic-yang-models/{PINNED_COMMIT}/yang", place="sonic-yang-models")
ENV_VAR = YANG_MODELS.env
SHARED_YANG_DIR = YANG_MODELS.shared
CACHED_YANG_DIR = YANG_MODELS.cached or SHARED_YANG_DIR

__all__ = ["CACHED_YANG_DIR", "ENV_VAR", "PINNED_COMMIT", "SHARED_YANG_DIR", "YANG_MODELS", "SonicYangValidator",
           "YangIssue", "find_yang_dir"]


@dataclass(frozen=True)
class YangIssue:
    """One problem found in one device's Config DB."""

    device: str
    table: str  # Config DB table, e.g. "PORT"
    key: str  # Config DB key, e.g. "Ethernet0" or "Ethernet0|3"
    field: str | None  # leaf name, e.g. "mtu"; None when the issue is about the entry or the table
    message: str  # libyang's message

    def __str__(self) -> str:
        where = f"{self.table}|{self.key}" if self.key else self.table
        if self.field is not None:
            where += f"/{self.field}"
        return f"{self.device}: {where}: {self.message}"


def find_yang_dir(explicit: str | Path | None = None) -> Path:
    """The SONiC YANG models folder (`YANG_MODELS.find`: `explicit` or $TETON_SONIC_YANG_DIR, else this module's
    SHARED_YANG_DIR, else its CACHED_YANG_DIR).  TetonError (one line, the three ways) if none has any."""
    return YANG_MODELS.find(explicit, shared=SHARED_YANG_DIR, cached=CACHED_YANG_DIR)


# ---------------------------------------------------------------------------------------------------------------------
# libyang's errors (message and data path) come through the "libyang" Python logger.

_capture = threading.local()


class _CaptureFilter(logging.Filter):
    """While a validation runs in this thread, keep libyang's records for it and keep them out of the logs."""

    def filter(self, record: logging.LogRecord) -> bool:
        sink = getattr(_capture, "sink", None)
        if sink is None:
            return True
        args = record.args if isinstance(record.args, tuple) else ()
        if args:
            sink.append((str(args[0]), str(args[1]) if len(args) > 1 else ""))
        else:
            sink.append((record.getMessage(), ""))
        return False


_FILTER = _CaptureFilter()
_LIBYANG_LOG = logging.getLogger("libyang")
if not any(isinstance(f, _CaptureFilter) for f in _LIBYANG_LOG.filters):
    _LIBYANG_LOG.addFilter(_FILTER)

_DATA_LOC = re.compile(r'[Dd]ata location "(.*)"')
_SCHEMA_LOC = re.compile(r'[Ss]chema location "([^"]*)"')
_LINE = re.compile(r"[Ll]ine number (\d+)")
_EXC_TAIL = re.compile(r": ((?:Schema location|Data location|Line number) .*)$")
_UNKNOWN_NODE = re.compile(r'^Node "([^"]+)" not found')
_LEAFREF_VALUE = re.compile(r'^Invalid leafref value "(.*)" - no target instance "([^"]*)"')
_UNION_VALUE = re.compile(r'^Invalid union value "(.*)" - no matching subtype found')
_PREDICATE = re.compile(r"""\[([^=\]]+)=(?:'([^']*)'|"([^"]*)")\]""")


def _segments(path: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """Split a libyang path into (node name, [(key, value), ...]) segments; key values may hold '/'."""
    out: list[tuple[str, list[tuple[str, str]]]] = []
    i, n = 0, len(path)
    while i < n:
        if path[i] == "/":
            i += 1
            continue
        start = i
        quote = ""
        depth = 0
        while i < n:
            ch = path[i]
            if quote:
                if ch == quote:
                    quote = ""
            elif ch in "'\"":
                quote = ch
            elif ch == "[":
                depth += 1
            elif ch == "]":
                depth -= 1
            elif ch == "/" and depth == 0:
                break
            i += 1
        seg = path[start:i]
        bracket = seg.find("[")
        name = seg if bracket < 0 else seg[:bracket]
        preds = [] if bracket < 0 else [(k.strip(), a or b) for k, a, b in _PREDICATE.findall(seg[bracket:])]
        out.append((name.split(":")[-1], preds))
    return out


def _canonical(part: str) -> str:
    """A key part as libyang may print it in a path: IP addresses and prefixes in canonical form, else lower case."""
    try:
        if "/" in part:
            return str(ipaddress.ip_interface(part))
        return str(ipaddress.ip_address(part))
    except ValueError:
        return part.lower()


def _message(msg: str) -> str:
    msg = " ".join(msg.split())  # must-condition messages quote multi-line XPath
    return msg[:-1] if msg.endswith(".") else msg


# ---------------------------------------------------------------------------------------------------------------------
# The document being validated: one item per Config DB entry of a modelled table.


@dataclass
class _Item:
    table: Table
    shape: Shape
    key: str  # Config DB key
    members: dict[str, str]  # JSON member text ('"mtu":9100') by leaf name; list keys first
    pairs: list[tuple[str, str]] = field(default_factory=list)  # map tables: (Config DB field, JSON object text)
    alive: bool = True
    _text: str | None = None

    def text(self) -> str:
        """The JSON object of this entry (for a map table, without the closing '[...]}' of its pairs)."""
        if self._text is None:
            body = ",".join(self.members.values())
            if self.pairs:
                self._text = "{" + body + ("," if body else "") + quote(self.shape.inner.name) + ":["  # type: ignore[union-attr]
            else:
                self._text = "{" + body + "}"
        return self._text

    def drop_field(self, fld: str) -> bool:
        if fld in self.members and fld not in self.shape.key_names:
            self.members = {k: v for k, v in self.members.items() if k != fld}   # a copy: shared by the row cache
        else:
            kept = [(name, pair) for name, pair in self.pairs if name != fld]
            if len(kept) == len(self.pairs):
                return False
            self.pairs = kept
        self._text = None
        return True


class SonicYangValidator:
    """Validates SONiC Config DB documents against the SONiC YANG models (load once, validate many)."""

    max_issues = 100  # stop after this many issues for one document

    def __init__(self, yang_dir: str | Path | None = None):
        self.yang_dir = find_yang_dir(yang_dir)
        files = sorted(self.yang_dir.glob("*.yang"))
        libyang.configure_logging(True, logging.ERROR)  # errors carry their data path
        names = [f.stem.split("@")[0] for f in files]
        # (table, key) -> (row, shape, members, pairs, entry text, conflicting fields) of the last row translated
        # under that key: most rows (a port's QoS, buffers, watchdog) are equal on every switch of a model, and
        # comparing two small dicts costs a fraction of encoding one.  Only rows of strings (Config DB's own values)
        # are kept, so equal rows always encode alike (1 == True == 1.0 would not); an item's members and pairs are
        # shared with the cache, so `_Item.drop_field` replaces them instead of changing them.
        self._rows: dict[tuple[str, str], tuple[dict[str, Any], Shape, dict[str, str], list[tuple[str, str]], str,
                                                tuple[str, ...]]] = {}
        try:
            self._ctx = libyang.Context(str(self.yang_dir))
            for name in names:  # every module before walking the schema: libyang 2 recompiles on each load
                self._ctx.load_module(name)
            self._tables = index_tables(self._ctx, names)
        except libyang.LibyangError as exc:
            raise TetonError(f"SONiC YANG models in {self.yang_dir} do not load: {exc}") from None

    # -- public API ---------------------------------------------------------------------------------------------------

    @property
    def tables(self) -> list[str]:
        """Every Config DB table the models describe."""
        return sorted(self._tables)

    def unmodelled_tables(self, config_db: dict[str, Any]) -> list[str]:
        """Tables of `config_db` that no model describes (validate() skips them)."""
        if not isinstance(config_db, dict):
            return []
        return sorted(str(t) for t in config_db if t not in self._tables)

    def validate(self, device: str, config_db: dict[str, Any]) -> list[YangIssue]:
        """Every issue libyang finds in `config_db`, tables without a model skipped; [] means valid.  Never raises
        on bad data."""
        issues: list[YangIssue] = []
        if not isinstance(config_db, dict):
            return [YangIssue(device, "", "", None, "config_db is not a JSON object")]
        items = self._translate(device, config_db, issues)
        self._check(device, items, issues)
        return issues

    # -- translation --------------------------------------------------------------------------------------------------

    def _translate(self, device: str, config_db: dict[str, Any], issues: list[YangIssue]) -> list[_Item]:
        items: list[_Item] = []
        rows = self._rows
        for tname, entries in config_db.items():
            table = self._tables.get(tname)
            if table is None:
                continue
            if not isinstance(entries, dict):
                issues.append(YangIssue(device, tname, "", None, "table is not a JSON object"))
                continue
            containers, lists = table.containers, table.lists
            for key, fields in entries.items():
                hit = rows.get((tname, key)) if type(key) is str else None
                if hit is not None and hit[0] == fields:      # the same row as on an earlier switch
                    for name in hit[5]:
                        issues.append(YangIssue(device, tname, key, name,
                                                f'field "{name}" contradicts the key "{key}"'))
                    items.append(_Item(table, hit[1], key, hit[2], hit[3], _text=hit[4]))
                    continue
                key = str(key)
                if not isinstance(fields, dict):
                    issues.append(YangIssue(device, tname, key, None, "entry is not a JSON object"))
                    continue
                shape = containers.get(key)
                if shape is not None:
                    members: dict[str, str] = {}
                else:
                    parts = key.split("|")
                    shape = lists.get(len(parts))
                    if shape is None:
                        issues.append(YangIssue(device, tname, key, None, self._no_shape(table, key)))
                        continue
                    members = {
                        name: prefix + encode(part)
                        for name, (prefix, encode), part in zip(shape.key_names, shape.key_encoders, parts, strict=True)
                    }
                conflicts: list[str] = []
                pairs, strings = self._fill(shape, fields, members, conflicts)
                for name in conflicts:
                    issues.append(YangIssue(device, tname, key, name, f'field "{name}" contradicts the key "{key}"'))
                item = _Item(table, shape, key, members, pairs)
                items.append(item)
                if strings and len(rows) < ROW_CACHE_MAX:
                    rows[(tname, key)] = (dict(fields), shape, members, pairs, item.text(), tuple(conflicts))
        return items

    @staticmethod
    def _no_shape(table: Table, key: str) -> str:
        if not table.lists:
            return f'"{key}" is not an entry of {table.name} (the model has: {", ".join(table.containers)})'
        keys = " or ".join("|".join(s.key_names) for _, s in sorted(table.lists.items()))
        extra = f" (or one of: {', '.join(table.containers)})" if table.containers else ""
        return f'key "{key}" has {key.count("|") + 1} part(s) but {table.name} is keyed by {keys}{extra}'

    @staticmethod
    def _fill(shape: Shape, fields: dict[str, Any], members: dict[str, str],
              conflicts: list[str]) -> tuple[list[tuple[str, str]], bool]:
        """Encode the fields of one entry into `members` (keys already there); return the pairs of a map table, and
        whether every field's name and value is a string (a row the row cache may keep).  A field named like a key
        leaf is dropped, and listed in `conflicts` when its value differs from the key."""
        leaves = shape.leaves
        inner = shape.inner
        key_names = shape.key_names
        pairs: list[tuple[str, str]] = []
        strings = True
        for name, value in fields.items():
            if type(name) is not str:
                name = str(name)
                strings = False
            if type(value) is not str:
                strings = False
            if name.endswith("@"):  # Redis' marker of a comma-separated leaf-list
                name = name[:-1]
            leaf = leaves.get(name)
            if name in key_names:
                prefix, encode = shape.key_encoders[key_names.index(name)]
                if prefix + encode(value) != members.get(name):
                    conflicts.append(name)
            elif leaf is not None:
                text = leaf[1](value)
                if text != "[]":  # an empty leaf-list is no instance at all
                    members[name] = leaf[0] + text
            elif name == "NULL" and value == "NULL":  # Redis' placeholder of an entry without fields
                continue
            elif inner is not None:
                pair = inner.key_prefix + inner.key_encode(name) + inner.value_prefix + inner.value_encode(value)
                pairs.append((name, pair + "}"))
            else:
                members[name] = quote(name) + ":" + enc_string(value)  # not in the model: libyang reports it
        return pairs, strings

    @staticmethod
    def _serialize(items: list[_Item]) -> tuple[str, dict[int, tuple[_Item, str | None]]]:
        """RFC 7951 JSON text with every list entry, container and map pair on its own line, and the map from line
        number to (item, Config DB field of the map pair on that line or None)."""
        grouped: dict[str, dict[str, dict[str, list[_Item]]]] = {}
        for item in items:
            if item.alive:
                grouped.setdefault(item.table.top, {}).setdefault(item.table.name, {}).setdefault(
                    item.shape.name, []
                ).append(item)
        out = ["{"]
        lines: dict[int, tuple[_Item, str | None]] = {}

        def emit(prefix: str, item: _Item, suffix: str) -> None:
            out.append(prefix + item.text() + ("" if item.pairs else suffix))
            lines[len(out)] = (item, None)
            if item.pairs:
                last = len(item.pairs) - 1
                for k, (fld, pair) in enumerate(item.pairs):
                    out.append(pair + ("," if k < last else ""))
                    lines[len(out)] = (item, fld)
                out.append("]}" + suffix)

        for t, (top, tables) in enumerate(grouped.items()):
            if t:
                out[-1] += ","
            out.append(quote(top) + ":{")
            for i, (tname, shapes) in enumerate(tables.items()):
                if i:
                    out[-1] += ","
                out.append(quote(tname) + ":{")
                for j, (sname, members) in enumerate(shapes.items()):
                    if j:
                        out[-1] += ","
                    if members[0].shape.is_list:
                        out.append(quote(sname) + ":[")
                        last = len(members) - 1
                        for k, item in enumerate(members):
                            emit("", item, "," if k < last else "")
                        out.append("]")
                    else:
                        emit(quote(sname) + ":", members[0], "")
                out.append("}")
            out.append("}")
        out.append("}")
        return "\n".join(out), lines

    # -- validation ---------------------------------------------------------------------------------------------------

    def _parse(self, text: str) -> list[tuple[str, str]]:
        """libyang's errors for `text` as (message, location) pairs; [] if it is valid."""
        libyang.configure_logging(True, logging.ERROR)  # process-wide: someone may have changed it since __init__
        sink: list[tuple[str, str]] = []
        _capture.sink = sink
        try:
            dnode = self._ctx.parse_data_mem(text, "json", strict=True, no_state=True, validate_present=True)
        except libyang.LibyangError as exc:
            if not sink:  # no record came through the logger: fall back on the exception's text
                msg = str(exc).removeprefix("failed to parse data tree: ")
                tail = _EXC_TAIL.search(msg)
                sink.append((msg[: tail.start()], tail.group(1)) if tail else (msg, ""))
            return sink
        finally:
            _capture.sink = None
        if dnode is not None:
            dnode.free()
        return []

    def _check(self, device: str, items: list[_Item], issues: list[YangIssue]) -> None:
        """Validate, report the error, drop its cause and validate again, until clean or max_issues."""
        reported: set[tuple[str, str, str | None]] = {(i.table, i.key, i.field) for i in issues}
        dropped: dict[str, set[str]] = {}  # key part of a dropped entry -> tables it was dropped from
        count = len(issues)

        def report(table: str, key: str, fld: str | None, msg: str) -> None:
            nonlocal count
            if (table, key, fld) in reported or self._is_cascade(msg, table, dropped):
                return
            reported.add((table, key, fld))
            issues.append(YangIssue(device, table, key, fld, _message(msg)))
            count += 1

        def drop(item: _Item) -> None:
            item.alive = False
            for part in item.key.split("|"):
                dropped.setdefault(part, set()).add(item.table.name)

        for _ in range(self.max_issues * 4):
            if count >= self.max_issues:
                return
            text, lines = self._serialize(items)
            errors = self._parse(text)
            if not errors:
                return
            msg, loc = errors[0]
            if not self._handle(msg, loc, items, lines, report, drop):
                return

    @staticmethod
    def _is_cascade(msg: str, table: str, dropped: dict[str, set[str]]) -> bool:
        """Whether `msg` is about a reference to an entry dropped because of its own, already reported, issue."""
        ref = _LEAFREF_VALUE.match(msg)
        if ref:
            target = _segments(ref.group(2))
            return len(target) > 1 and target[1][0] in dropped.get(ref.group(1), ())
        union = _UNION_VALUE.match(msg)  # a union holding a leafref, e.g. PFC_WD/QUEUE/PORT_QOS_MAP ifname
        return union is not None and bool(dropped.get(union.group(1), set()) - {table})

    def _handle(self, msg: str, loc: str, items: list[_Item], lines: dict[int, tuple[_Item, str | None]],
                report: Callable[..., None], drop: Callable[[_Item], None]) -> bool:
        """Report one libyang error and drop what caused it; False when it cannot be located (then stop)."""
        data_m = _DATA_LOC.search(loc)
        schema_m = _SCHEMA_LOC.search(loc)
        line_m = _LINE.search(loc)
        path = data_m.group(1) if data_m else (schema_m.group(1) if schema_m else "")
        segs = _segments(path)
        item, line_fld = lines.get(int(line_m.group(1)), (None, None)) if line_m else (None, None)
        table = item.table if item else (self._tables.get(segs[1][0]) if len(segs) > 1 else None)
        shape = item.shape if item else (table.shapes.get(segs[2][0]) if table and len(segs) > 2 else None)

        # Field: the node below the entry (a key leaf means the entry itself; the map list means one of its pairs).
        fld: str | None = line_fld
        if fld is None and len(segs) > 3 and shape is not None:
            name, preds = segs[3]
            if shape.inner is not None and name == shape.inner.name:
                fld = preds[0][1] if preds else None
            elif name not in shape.key_names:
                fld = name
        unknown = _UNKNOWN_NODE.match(msg)
        if unknown and fld is None:
            fld = unknown.group(1)

        if item is None and shape is not None and data_m is None and msg.startswith("Mandatory node") and fld:
            # Only the schema location is given: every entry of that list or container lacking the leaf is at fault.
            culprits = [i for i in items if i.alive and i.shape is shape and fld not in i.members]
            for culprit in culprits:
                report(culprit.table.name, culprit.key, fld, msg)
                drop(culprit)
            return bool(culprits)

        if item is None and shape is not None and len(segs) > 2:
            item = self._find(items, shape, segs[2][1])

        if item is None:
            report(table.name if table else "", "", fld, msg)
            return False
        report(item.table.name, item.key, fld, msg)
        if fld is None or not item.drop_field(fld):
            drop(item)
        return True

    @staticmethod
    def _find(items: list[_Item], shape: Shape, preds: list[tuple[str, str]]) -> _Item | None:
        """The entry of `shape` whose key matches a data path's predicates (libyang gives canonical values)."""
        candidates = [i for i in items if i.alive and i.shape is shape]
        if not shape.is_list:
            return candidates[0] if candidates else None
        values = dict(preds)
        if any(k not in values for k in shape.key_names):
            return None
        wanted = "|".join(values[k] for k in shape.key_names)
        for item in candidates:
            if item.key == wanted:
                return item
        canonical = [_canonical(values[k]) for k in shape.key_names]
        for item in candidates:
            if [_canonical(p) for p in item.key.split("|")] == canonical:
                return item
        return None
