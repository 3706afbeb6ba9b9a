"""Task files (the seed schema of models/task.py): the answer key, pseudonymized like its corpus.

Each field is handled by what it holds: `implicated_hosts` are host names, `attacker_ip`
an address, `must_find`, IOCs and `expect` terms are strings cut from documents (free
text, transformed token by token exactly like the documents), `patterns` are regular
expressions, action arguments are tool arguments. Ids, technique ids, tool names, data
stream names and numbers are kept. The output has the input's shape, so it still validates.
"""

from __future__ import annotations

from typing import Any

from pytest_soclab.pseudonymize.documents import DocumentWalker
from pytest_soclab.pseudonymize.kinds import HOST, IP, KEEP, TEXT, USER, classify
from pytest_soclab.pseudonymize.text import TextPseudonymizer

# Tool argument name -> kind (the argument names of pytest_soclab.models.tools).
_ARG_KINDS = {
    "host": HOST,
    "ip": IP,
    "user": USER,
    "pid": KEEP,
    "entity_id": KEEP,
    "timeout": KEEP,
    "index": KEEP,
    "pattern": KEEP,
}


class TaskCodec:
    """Learn from and transform one task dict (the JSON file's content)."""

    def __init__(self, walker: DocumentWalker, texts: TextPseudonymizer):
        self.walker = walker
        self.texts = texts

    # ---------------------------------------------------------------- learning

    def learn(self, task: dict[str, Any]) -> None:
        texts, w = self.texts, self.walker
        for field in ("title", "description"):
            _text_learn(texts, task.get(field))
        trig = task.get("trigger")
        if isinstance(trig, dict):
            _text_learn(texts, trig.get("prompt"))
            pivot = trig.get("pivot")
            if isinstance(pivot, dict):
                w.learn_doc(pivot)
        gt = task.get("ground_truth")
        if isinstance(gt, dict):
            for field in ("root_cause", "correlation", "conclusion"):
                _text_learn(texts, gt.get(field))
            for h in _strings(gt.get("implicated_hosts")):
                w.learn_value(HOST, h)
            for s in _strings(gt.get("iocs")):
                _text_learn(texts, s)
            for ke in _dicts(gt.get("key_evidence")):
                _text_learn(texts, ke.get("must_find"))
        er = task.get("expected_response")
        if isinstance(er, dict):
            for s in _strings(er.get("required")) + _strings(er.get("over_reaction_penalty")):
                _text_learn(texts, s)
            for ref in _dicts(er.get("required_actions")) + _dicts(er.get("penalized_actions")):
                self._learn_action(ref)
        sc = task.get("scoring")
        if isinstance(sc, dict):
            for cp in _dicts(sc.get("checkpoints")):
                _text_learn(texts, cp.get("check"))
                ex = cp.get("expect")
                if isinstance(ex, dict):
                    for key in ("terms", "any_terms", "forbid"):
                        for s in _strings(ex.get(key)):
                            _text_learn(texts, s)
                    for ref in _dicts(ex.get("actions")):
                        self._learn_action(ref)

    def _learn_action(self, ref: dict[str, Any]) -> None:
        _text_learn(self.texts, ref.get("description"))
        args = ref.get("args")
        if isinstance(args, dict):
            for name, value in args.items():
                kind = _ARG_KINDS.get(name, classify(name))
                for v in _strings(value if isinstance(value, list) else [value]):
                    if "*" not in v and "?" not in v:  # a glob names no single entity
                        self.walker.learn_value(kind, v)

    # ---------------------------------------------------------------- transform

    def transform(self, task: dict[str, Any]) -> dict[str, Any]:
        text = self.texts.text
        out: dict[str, Any] = {}
        for key, value in task.items():
            if key in (
                "id",
                "source_case",
                "difficulty",
                "attack_stage",
                "allowed_tools",
                "pass_score",
                "max_tool_calls",
            ):
                out[key] = value
            elif key == "trigger" and isinstance(value, dict):
                out[key] = self._trigger(value)
            elif key == "ground_truth" and isinstance(value, dict):
                out[key] = self._ground_truth(value)
            elif key == "expected_response" and isinstance(value, dict):
                out[key] = self._expected_response(value)
            elif key == "scoring" and isinstance(value, dict):
                out[key] = self._scoring(value)
            elif isinstance(value, str):
                out[key] = text(value)
            else:
                out[key] = self.walker.json(value)
        return out

    def _trigger(self, trig: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for key, value in trig.items():
            if key == "pivot" and isinstance(value, dict):
                out[key] = self._pivot(value)
            elif key == "type":
                out[key] = value
            else:
                out[key] = self._any(value)
        return out

    def _pivot(self, pivot: dict[str, Any]) -> dict[str, Any]:
        # ECS field names as keys (host.name, source.ip), plus time_utc and alert_rule.
        out = {}
        for key, value in pivot.items():
            if key == "time_utc":
                out[key] = value
            else:
                out[key] = self.walker.doc({key: value})[key]
        return out

    def _ground_truth(self, gt: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in gt.items():
            if key == "techniques":
                out[key] = value
            elif key == "attacker_ip" and isinstance(value, str):
                out[key] = self.texts.ip_or_text(value)
            elif key == "key_evidence" and isinstance(value, list):
                out[key] = [
                    {k: (v if k == "source" else self._any(v)) for k, v in ke.items()}
                    if isinstance(ke, dict)
                    else self._any(ke)
                    for ke in value
                ]
            else:
                out[key] = self._any(value)
        return out

    def _expected_response(self, er: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in er.items():
            if key in ("required_actions", "penalized_actions") and isinstance(value, list):
                out[key] = [self._action(ref) for ref in value]
            else:
                out[key] = self._any(value)
        return out

    def _scoring(self, sc: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in sc.items():
            if key == "checkpoints" and isinstance(value, list):
                out[key] = [self._checkpoint(cp) if isinstance(cp, dict) else cp for cp in value]
            else:
                out[key] = value  # weights
        return out

    def _checkpoint(self, cp: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in cp.items():
            if key in ("dim", "points"):
                out[key] = value
            elif key == "expect" and isinstance(value, dict):
                out[key] = self._expect(value)
            else:
                out[key] = self._any(value)
        return out

    def _expect(self, ex: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in ex.items():
            if key in ("where", "grounded"):
                out[key] = value
            elif key == "patterns" and isinstance(value, list):
                out[key] = [self.texts.regex(v) if isinstance(v, str) else v for v in value]
            elif key == "actions" and isinstance(value, list):
                out[key] = [self._action(ref) for ref in value]
            else:
                out[key] = self._any(value)
        return out

    def _action(self, ref: Any) -> Any:
        if not isinstance(ref, dict):
            return ref
        out: dict[str, Any] = {}
        for key, value in ref.items():
            if key == "tool":
                out[key] = value
            elif key == "args" and isinstance(value, dict):
                out[key] = {name: self._arg(name, v) for name, v in value.items()}
            else:
                out[key] = self._any(value)
        return out

    def _arg(self, name: str, value: Any) -> Any:
        kind = _ARG_KINDS.get(name, TEXT)
        if kind == KEEP:
            return value
        if isinstance(value, list):
            return [self._arg(name, v) for v in value]
        if isinstance(value, str):
            if kind == IP:
                return self.texts.ip_or_text(value)
            return self.texts.text(value)  # globs too: the text transformation keeps * and ?
        return self.walker.json(value)

    def _any(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.texts.text(value)
        if isinstance(value, list):
            return [self._any(v) for v in value]
        if isinstance(value, dict):
            return self.walker.json(value)
        return value


def _text_learn(texts: TextPseudonymizer, value: Any) -> None:
    if isinstance(value, str):
        texts.learn(value)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
