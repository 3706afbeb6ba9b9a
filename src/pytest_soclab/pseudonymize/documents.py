"""ECS documents: the walkers that learn from and transform them, field by field.

Each field's kind (kinds.py) decides what happens to its strings:

- learning: typed fields teach the names that free text will then hide;
- transforming: almost every string goes through the one text transformation (so a
  value is pseudonymized the same whether it sits in its field or inside a message);
  kept fields are copied; `dns.question.subdomain` has every label replaced.

Objects of a shape seen often go through compiled plans (shapes.py), the others through the
generic walkers here; both give the same result.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pytest_soclab.pseudonymize.ip import IpPseudonymizer
from pytest_soclab.pseudonymize.kinds import (
    ADDRESS,
    DOMAIN,
    DROP,
    EMAIL,
    FULL_NAME,
    HOST,
    IP,
    KEEP,
    KIND_NAMES,
    LABELS,
    SECRET,
    TEXT,
    TRANSFORM_KIND,
    URL,
    USER,
    Node,
    copy_json,
)
from pytest_soclab.pseudonymize.names import Names
from pytest_soclab.pseudonymize.shapes import (
    COMPILE_AFTER,
    MAX_PLANS_PER_FIELD,
    Compiler,
    Plan,
    PlanHooks,
    compile_copy,
    compile_in_place,
    compile_learn,
    compile_mark,
)
from pytest_soclab.pseudonymize.text import TextPseudonymizer



class DocumentWalker:
    """Learn from and transform ECS documents, ES search hits, ES|QL responses and generic JSON."""

    def __init__(
        self, texts: TextPseudonymizer, ips: IpPseudonymizer, names: Names, *, drop_geo: bool = False
    ):
        self.texts = texts
        self.ips = ips
        self.names = names
        self.drop_geo = drop_geo
        self.doc_root = Node("", TEXT)
        self.json_root = Node("", TEXT)
        self._seen: list[set[str]] = [set() for _ in KIND_NAMES]
        # Bound once: the hot loops run per nested object. (The memo dicts are cleared, never replaced.)
        self._memo_get = texts.memo.get
        self._compute = texts.transform  # with the encoded forms read (text.py)
        self._ip_get = ips.memo_text.get
        # Marks left by `learn_marking`, per transform kind: flat [container, key, container, key...]
        # of the string leaves to transform (cleared, never replaced: compiled walkers bind them).
        self._marks: list[list[Any]] = [[] for _ in KIND_NAMES]
        self._hooks = PlanHooks(
            drop_geo=drop_geo,
            memo_get=self._memo_get,
            compute=self._compute,
            ip_get=self._ip_get,
            typed=self._typed,
            learn_new=self._learn_new,
            seen=self._seen,
            marks=self._marks,
            copy_dict=self._copy_dict,
            copy_list=self._list,
            in_place_dict=self._in_place_dict,
            in_place_list=self._list_in_place,
            learn_dict=self._learn_dict,
            learn_list=self._learn_list,
            mark_dict=self._mark_dict,
            mark_list=self._mark_list,
        )

    def forget_learned(self) -> None:
        """Forget which values were learned (after names were loaded: they must be probed again)."""
        for seen in self._seen:
            seen.clear()

    # ---------------------------------------------------------------- learning

    def learn_value(self, kind: int, v: str) -> None:
        if kind == TEXT or kind == URL:
            self.texts.learn(v)
        elif kind == KEEP or kind == LABELS or kind == DROP:
            return
        elif kind == IP:
            if self.ips.address(v) is None:
                self.texts.learn(v)
        elif kind == HOST:
            if self.ips.address(v) is None:
                self.names.learn_domain(v, host=True)
                self.texts.learn(v)
        elif kind == DOMAIN:
            if self.ips.address(v) is None:
                self.names.learn_domain(v)
                self.texts.learn(v)
        elif kind == USER:
            self.names.learn_user(v)
        elif kind == EMAIL:
            self.names.learn_email(v)
        elif kind == FULL_NAME:
            self.names.learn_full_name(v)
        elif kind == ADDRESS:
            if self.ips.address(v) is None:
                if "@" in v:
                    self.names.learn_email(v)
                elif "/" in v or "\\" in v or " " in v:
                    self.texts.learn(v)
                else:
                    self.names.learn_domain(v)
        elif kind == SECRET:
            self.names.learn_bare(v)

    def learn_doc(self, doc: dict[str, Any], node: Node | None = None) -> None:
        self._learn_dict(doc, node or self.doc_root)

    def _learn_new(self, kind: int, v: str) -> None:
        """Learn a value not seen before in this kind (learning is idempotent: each value once)."""
        done = self._seen[kind]
        if len(done) > 1_000_000:
            done.clear()
        done.add(v)
        self.learn_value(kind, v)

    def _learn_dict(self, doc: dict[str, Any], node: Node) -> None:
        shape = ("learn", tuple(doc))
        plan = node.plans.get(shape)
        if plan is None:
            plan = self._plan(node, shape, compile_learn, doc)
            if plan is None:
                self._learn_doc(doc, node)
                return
        plan(doc)

    def _plan(
        self, node: Node, shape: tuple[str, tuple[str, ...]], compiler: Compiler, sample: dict[str, Any]
    ) -> Plan | None:
        seen = node.sightings.get(shape, 0) + 1
        if seen < COMPILE_AFTER or len(node.plans) >= MAX_PLANS_PER_FIELD:
            node.sightings[shape] = seen
            return None
        plan = node.plans[shape] = compiler(self._hooks, node, shape[1], sample)
        node.sightings.pop(shape, None)
        return plan

    def _learn_doc(self, doc: dict[str, Any], node: Node, mark: bool = False) -> None:
        """Learn an object's string leaves (`mark`: also note each one to transform, see
        learn_marking) and descend into its objects and lists."""
        kinds = node.kinds
        seen = self._seen
        marks = self._marks
        learn_dict, learn_list = (self._mark_dict, self._mark_list) if mark else (self._learn_dict, self._learn_list)
        for k, v in doc.items():
            try:
                kind = kinds[k]
            except KeyError:
                kind = node.child(k).kind
            if kind == KEEP:
                continue
            t = type(v)
            if t is str:
                if v not in seen[kind]:
                    self._learn_new(kind, v)
                if mark:
                    m = marks[TRANSFORM_KIND[kind]]
                    m.append(doc)
                    m.append(k)
            elif t is dict:
                learn_dict(v, node.children[k])
            elif t is list:
                learn_list(v, node.children[k])

    def _learn_list(self, items: list[Any], node: Node) -> None:
        kind = node.kind
        done = self._seen[kind]
        for v in items:
            t = type(v)
            if t is str:
                if v not in done:
                    self._learn_new(kind, v)
            elif t is dict:
                self._learn_dict(v, node)
            elif t is list:
                self._learn_list(v, node)

    # ---------------------------------------------------------------- learn, marking what to transform

    def learn_marking(self, docs: Iterable[dict[str, Any]]) -> None:
        """Learn documents the caller owns and will transform in place (`transform_marked`), noting
        where their string leaves are: the transformation then visits those leaves alone instead of
        walking the documents again. Objects must not be shared (parsed JSON), and not with drop_geo
        (dropping needs the walk)."""
        learn = self._mark_dict
        root = self.doc_root
        try:
            for doc in docs:
                learn(doc, root)
        except BaseException:
            self.forget_marks()
            raise

    def mark_state(self) -> list[int]:
        """Where the marks stand: `forget_marks(state)` drops those left since."""
        return [len(marks) for marks in self._marks]

    def forget_marks(self, since: list[int] | None = None) -> None:
        for i, marks in enumerate(self._marks):
            del marks[since[i] if since else 0 :]

    def transform_marked(self) -> None:
        """Transform, in place, the leaves `learn_marking` noted (what `doc_in_place` would do)."""
        self.texts.sync()
        try:
            for tkind, marks in enumerate(self._marks):
                if marks:
                    self._transform_leaves(tkind, marks)
        finally:
            self.forget_marks()

    def _transform_leaves(self, tkind: int, marks: list[Any]) -> None:
        pairs = iter(marks)
        if tkind == TEXT:
            memo_get = self._memo_get
            compute = self._compute
            for c, k in zip(pairs, pairs):
                v = c[k]
                r = memo_get(v)
                c[k] = compute(v) if r is None else r
        elif tkind == IP:
            ip_get = self._ip_get
            typed = self._typed
            for c, k in zip(pairs, pairs):
                v = c[k]
                r = ip_get(v)
                c[k] = typed(IP, v) if r is None else r
        else:
            typed = self._typed
            for c, k in zip(pairs, pairs):
                c[k] = typed(tkind, c[k])

    def _mark_dict(self, doc: dict[str, Any], node: Node) -> None:
        shape = ("mark", tuple(doc))
        plan = node.plans.get(shape)
        if plan is None:
            plan = self._plan(node, shape, compile_mark, doc)
            if plan is None:
                self._learn_doc(doc, node, mark=True)
                return
        plan(doc)

    def _mark_list(self, items: list[Any], node: Node) -> None:
        kind = node.kind
        if kind == KEEP:  # kept strings (categories, types, hashes...): nothing to learn or note
            for v in items:
                t = type(v)
                if t is dict:
                    self._mark_dict(v, node)
                elif t is list:
                    self._mark_list(v, node)
            return
        done = self._seen[kind]
        m = self._marks[node.tkind]
        for i, v in enumerate(items):
            t = type(v)
            if t is str:
                if v not in done:
                    self._learn_new(kind, v)
                m.append(items)
                m.append(i)
            elif t is dict:
                self._mark_dict(v, node)
            elif t is list:
                self._mark_list(v, node)

    # ---------------------------------------------------------------- transform

    def doc(self, doc: dict[str, Any], node: Node | None = None) -> dict[str, Any]:
        """A pseudonymized copy of an ECS document (`_source`), nested or with dotted keys."""
        self.texts.sync()
        return self._copy_dict(doc, node or self.doc_root)

    def _copy_dict(self, doc: dict[str, Any], node: Node) -> dict[str, Any]:
        shape = ("copy", tuple(doc))
        plan = node.plans.get(shape)
        if plan is None:
            plan = self._plan(node, shape, compile_copy, doc)
            if plan is None:
                return self._doc(doc, node)
        return plan(doc)  # type: ignore[no-any-return]

    # The hot loop: one pass over the document, memoized text results looked up inline.
    def _doc(self, doc: dict[str, Any], node: Node) -> dict[str, Any]:
        tkinds = node.tkinds
        memo_get = self._memo_get
        compute = self._compute
        out: dict[str, Any] = {}
        for k, v in doc.items():
            try:
                kind = tkinds[k]
            except KeyError:
                kind = node.child(k).tkind
            t = type(v)
            if t is str:
                if kind == TEXT:
                    r = memo_get(v)
                    out[k] = compute(v) if r is None else r
                elif kind == KEEP:
                    out[k] = v
                else:
                    out[k] = self._typed(kind, v)
            elif kind == KEEP:
                out[k] = copy_json(v)  # a kept object (hashes, data_stream): everything under it is kept
            elif t is dict:
                if kind == DROP and self.drop_geo:
                    continue
                out[k] = self._copy_dict(v, node.children[k])
            elif t is list:
                if kind == DROP and self.drop_geo:
                    continue
                out[k] = self._list(v, node.children[k])
            else:
                out[k] = v
        return out

    def _list(self, items: list[Any], node: Node) -> list[Any]:
        kind = node.tkind
        if kind == KEEP:
            return copy_json(items)
        memo_get = self.texts.memo.get
        out: list[Any] = []
        for v in items:
            t = type(v)
            if t is str:
                r = memo_get(v) if kind == TEXT else None
                out.append(r if r is not None else self._typed(kind, v))
            elif t is dict:
                out.append(self._copy_dict(v, node))
            elif t is list:
                out.append(self._list(v, node))
            else:
                out.append(v)
        return out

    def doc_in_place(
        self, doc: dict[str, Any], node: Node | None = None, done: set[int] | None = None
    ) -> dict[str, Any]:
        """Pseudonymize a document the caller owns (e.g. just parsed), without copying it.

        `done`, when given, collects the ids of the objects changed: pass one set for a batch of
        live documents that may share objects, so that a shared object is changed once. Parsed
        JSON never shares objects and needs none.
        """
        self.texts.sync()
        if done is None:
            self._in_place_dict(doc, node or self.doc_root)
            return doc
        return self._doc_in_place(doc, node or self.doc_root, done)

    def _in_place_dict(self, doc: dict[str, Any], node: Node) -> None:
        shape = ("in_place", tuple(doc))
        plan = node.plans.get(shape)
        if plan is None:
            plan = self._plan(node, shape, compile_in_place, doc)
            if plan is None:
                self._doc_in_place(doc, node, None)
                return
        plan(doc)

    def _doc_in_place(self, doc: dict[str, Any], node: Node, done: set[int] | None) -> dict[str, Any]:
        if done is not None:
            if id(doc) in done:
                return doc
            done.add(id(doc))
        tkinds = node.tkinds
        memo_get = self._memo_get
        compute = self._compute
        ip_get = self._ip_get
        dropped: list[str] | None = None
        for k, v in doc.items():  # only values change: the dict's size does not
            try:
                kind = tkinds[k]
            except KeyError:
                kind = node.child(k).tkind
            if kind == KEEP:
                continue
            t = type(v)
            if t is str:
                if kind == TEXT:
                    r = memo_get(v)
                    doc[k] = compute(v) if r is None else r
                elif kind == IP:
                    r = ip_get(v)
                    doc[k] = self._typed(kind, v) if r is None else r
                else:
                    doc[k] = self._typed(kind, v)
            elif t is dict:
                if kind == DROP and self.drop_geo:
                    dropped = (dropped or []) + [k]
                elif done is None:
                    self._in_place_dict(v, node.children[k])
                else:
                    self._doc_in_place(v, node.children[k], done)
            elif t is list:
                if kind == DROP and self.drop_geo:
                    dropped = (dropped or []) + [k]
                else:
                    self._list_in_place(v, node.children[k], done)
        if dropped:
            for k in dropped:
                del doc[k]
        return doc

    def _list_in_place(self, items: list[Any], node: Node, done: set[int] | None) -> None:
        kind = node.tkind
        if kind == KEEP:
            return
        if done is not None:
            if id(items) in done:
                return
            done.add(id(items))
        get = self._memo_get if kind == TEXT else self._ip_get if kind == IP else None
        for i, v in enumerate(items):
            t = type(v)
            if t is str:
                r = get(v) if get is not None else None
                items[i] = r if r is not None else self._typed(kind, v)
            elif t is dict:
                if done is None:
                    self._in_place_dict(v, node)
                else:
                    self._doc_in_place(v, node, done)
            elif t is list:
                self._list_in_place(v, node, done)

    def _typed(self, kind: int, v: str) -> str:
        if kind == KEEP:
            return v
        if kind == IP:
            out = self.ips.address(v)
            return out if out is not None else self.texts.transform(v)
        if kind == LABELS:
            return self.names.labels(v) if v else v
        if kind == DROP and self.drop_geo:
            return ""
        r = self.texts.memo.get(v)
        return self.texts.transform(v) if r is None else r

    # ---------------------------------------------------------------- generic JSON

    def learn_json(self, obj: Any, node: Node | None = None) -> None:
        node = node or self.json_root
        if type(obj) is dict:
            if "_source" in obj or "fields" in obj and "_id" in obj:
                self._learn_hit(obj)
                return
            if type(obj.get("columns")) is list and type(obj.get("values")) is list:
                self._learn_esql(obj)
                return
            for k, v in obj.items():
                child = node.children.get(k) or node.child(k)
                if type(k) is str:
                    self.texts.learn(k)
                if type(v) is str:
                    self.learn_value(child.kind, v)
                elif type(v) in (dict, list):
                    self.learn_json(v, child)
        elif type(obj) is list:
            for v in obj:
                if type(v) is str:
                    self.learn_value(node.kind, v)
                else:
                    self.learn_json(v, node)

    def _learn_hit(self, hit: dict[str, Any]) -> None:
        for k, v in hit.items():
            if k in ("_source", "fields", "highlight") and type(v) is dict:
                self.learn_doc(v)
            elif type(v) in (dict, list):
                self.learn_json(v)

    def _learn_esql(self, resp: dict[str, Any]) -> None:
        nodes = [self._column_node(c) for c in resp["columns"]]
        for row in resp["values"]:
            if type(row) is not list:
                continue
            for node, v in zip(nodes, row):
                if type(v) is str:
                    self.learn_value(node.kind, v)
                elif type(v) is list:
                    self._learn_list(v, node)
                elif type(v) is dict:
                    self.learn_doc(v, node)

    def _column_node(self, col: Any) -> Node:
        name = col.get("name", "") if type(col) is dict else str(col)
        node = self.doc_root.child(name) if name else Node("", TEXT)
        if type(col) is dict and col.get("type") == "ip" and node.kind not in (IP, KEEP):
            node = Node(name, IP)
        return node

    def json(self, obj: Any, node: Node | None = None) -> Any:
        """Any JSON value: search hits and ES|QL responses are recognised, other strings are text,
        keys included (assets keyed by host name)."""
        if node is None:
            self.texts.sync()
            node = self.json_root
        t = type(obj)
        if t is dict:
            if "_source" in obj or "fields" in obj and "_id" in obj:
                return self._hit(obj)
            if type(obj.get("columns")) is list and type(obj.get("values")) is list:
                return self._esql(obj)
            out: dict[str, Any] = {}
            text = self.texts.compute
            for k, v in obj.items():
                child = node.children.get(k) or node.child(k)
                key = text(k) if type(k) is str else k
                tv = type(v)
                if tv is str:
                    out[key] = v if child.kind == KEEP else self._typed(child.kind, v)
                elif tv is dict or tv is list:
                    out[key] = self.json(v, child)
                else:
                    out[key] = v
            return out
        if t is list:
            return [
                (v if node.kind == KEEP else self._typed(node.kind, v))
                if type(v) is str
                else self.json(v, node)
                for v in obj
            ]
        if t is str:
            return self._typed(node.kind, obj)
        return obj

    def _hit(self, hit: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in hit.items():
            if k in ("_source", "fields", "highlight") and type(v) is dict:
                out[k] = self._copy_dict(v, self.doc_root)
            elif k in ("_index", "_id", "_score", "_routing", "_version", "_seq_no", "_primary_term", "sort"):
                out[k] = v
            else:
                out[k] = self.json(v)
        return out

    def _esql(self, resp: dict[str, Any]) -> dict[str, Any]:
        nodes = [self._column_node(c) for c in resp["columns"]]
        out = dict(resp)
        out["columns"] = resp["columns"]
        rows = []
        for row in resp["values"]:
            if type(row) is not list:
                rows.append(self.json(row))
                continue
            new = []
            for i, v in enumerate(row):
                node = nodes[i] if i < len(nodes) else self.json_root
                tv = type(v)
                if tv is str:
                    new.append(v if node.kind == KEEP else self._typed(node.kind, v))
                elif tv is list:
                    new.append(self._list(v, node))
                elif tv is dict:
                    new.append(self._copy_dict(v, node))
                else:
                    new.append(v)
            rows.append(new)
        out["values"] = rows
        return {
            k: (self.json(v) if k not in ("columns", "values") and type(v) in (dict, list) else v)
            for k, v in out.items()
        }
