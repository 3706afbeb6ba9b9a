"""YAML for scenario files, refusing what an author never means: duplicate keys (the last one
silently won), aliases that expand past a bound (a few hundred bytes can expand to billions of
nodes), and files too large to be a scenario."""

from __future__ import annotations

from typing import Any

import yaml

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_EXPANDED_NODES = 200_000


class YamlProblem(ValueError):
    """A scenario file's YAML is unusable: `where` is "line L column C" or ""."""

    def __init__(self, where: str, message: str):
        super().__init__(message)
        self.where = where
        self.message = message


def _where(mark: Any) -> str:
    return f"line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""


class _Loader(yaml.SafeLoader):
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                hash(key)
            except TypeError:
                continue  # the base constructor reports unhashable keys
            if key in seen:
                first = seen[key].start_mark
                raise YamlProblem(_where(key_node.start_mark),
                                  f"duplicate key {key!r} (first at line {first.line + 1})")  # fmt: skip
            seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """The document in `text`, or YamlProblem / yaml.YAMLError."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        raise YamlProblem("", f"file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB: not a scenario file")
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _check_expansion(root: yaml.Node) -> None:
    """Count the nodes the document has with every alias expanded, without expanding any: each
    node's size once (memoized by identity), in post-order, without recursion."""
    size: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in size:
            continue
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        if not done:
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in size)
            continue
        total = 1 + sum(size.get(id(c), 1) for c in children)
        size[id(node)] = total
        if total > MAX_EXPANDED_NODES:
            raise YamlProblem(_where(node.start_mark),
                              f"aliases expand to more than {MAX_EXPANDED_NODES} nodes (an alias bomb?)")  # fmt: skip
