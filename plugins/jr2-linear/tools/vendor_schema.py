"""Regenerate the subset of Linear's GraphQL schema the plugin's tests use, or check it.

    python plugins/jr2-linear/tools/vendor_schema.py SCHEMA --commit SHA   # write the subset
    python plugins/jr2-linear/tools/vendor_schema.py SCHEMA --check        # compare, write nothing

SCHEMA is `packages/sdk/src/schema.graphql` of the public `linear/linear` repository (MIT
licence) at commit SHA, as a path. The script

1. validates every operation of `jr2_linear.operations` against that FULL schema (it stops on
   the first error: an operation jr2 sends that Linear would refuse);
2. keeps, of the output types, only the fields those operations select (with their arguments as
   Linear declares them), and every input type, enum and scalar they reach, whole (so a raw
   `--filter` is checked against Linear's real filter types);
3. drops the descriptions and writes the definitions in Linear's order, under a header naming
   the source, commit and licence, to `tests/fixtures/linear/schema.graphql`.

Every definition kept is Linear's own, so an operation valid against the subset is valid against
the full schema; the fake server (`tests/fake_linear.py`) is built from the subset and cannot
answer a field Linear does not have.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    GraphQLSchema,
    TypeInfo,
    TypeInfoVisitor,
    Visitor,
    build_ast_schema,
    get_named_type,
    is_input_object_type,
    is_interface_type,
    is_object_type,
    parse,
    print_ast,
    validate,
    visit,
)
from graphql.language import (
    EnumTypeDefinitionNode,
    InputObjectTypeDefinitionNode,
    InterfaceTypeDefinitionNode,
    Node,
    ObjectTypeDefinitionNode,
    ScalarTypeDefinitionNode,
    SchemaDefinitionNode,
    UnionTypeDefinitionNode,
)

HERE = Path(__file__).resolve().parents[1]
OUT = HERE / "tests" / "fixtures" / "linear" / "schema.graphql"
sys.path.insert(0, str(HERE))

from jr2_linear.operations import ALL  # noqa: E402


def used_fields(schema: GraphQLSchema, docs: list[DocumentNode]) -> dict[str, set[str]]:
    """Output type name -> the field names the documents select on it."""
    used: dict[str, set[str]] = {}
    info = TypeInfo(schema)

    class Collect(Visitor):
        def enter_field(self, node: FieldNode, *_: object) -> None:
            parent = info.get_parent_type()
            if parent is not None and node.name.value != "__typename":
                used.setdefault(parent.name, set()).add(node.name.value)

    for doc in docs:
        visit(doc, TypeInfoVisitor(info, Collect()))
    return used


def reached(schema: GraphQLSchema, used: dict[str, set[str]]) -> set[str]:
    """Every named type the used fields, their arguments and the operations' variables reach
    (input types whole, transitively)."""
    names: set[str] = set(used)
    todo: list[str] = []
    for tname, fields in used.items():
        t = schema.type_map[tname]
        for fname in fields:
            field = t.fields[fname]  # type: ignore[union-attr]
            todo.append(get_named_type(field.type).name)
            todo += [get_named_type(a.type).name for a in field.args.values()]
    while todo:
        name = todo.pop()
        if name in names:
            continue
        names.add(name)
        t = schema.type_map[name]
        if is_input_object_type(t):
            todo += [get_named_type(f.type).name for f in t.fields.values()]  # type: ignore[union-attr]
    return names


def _replace(node: Node, **changes: Any) -> Any:
    """A copy of an AST node with some attributes changed (the nodes are frozen)."""
    values = {k: getattr(node, k) for k in node.keys}
    values.update(changes)
    return type(node)(**values)


def _bare(node: Any) -> Any:
    """The definition without descriptions, its fields', arguments' and values' included."""
    changes: dict[str, Any] = {}
    if "description" in node.keys:
        changes["description"] = None
    for attr in ("fields", "arguments", "values"):
        children = getattr(node, attr, None)
        if children:
            changes[attr] = tuple(_bare(c) for c in children)
    return _replace(node, **changes)


def subset(full_text: str) -> tuple[str, list[str]]:
    """The subset SDL and the names of the operations validated."""
    full_doc = parse(full_text)
    schema = build_ast_schema(full_doc)
    docs: list[DocumentNode] = []
    for name, text in ALL.items():
        doc = parse(text)
        errors = validate(schema, doc)
        if errors:
            raise SystemExit(f"{name} is not valid against Linear's schema: {errors[0].message}")
        docs.append(doc)
    used = used_fields(schema, docs)
    keep = reached(schema, used)
    out = []
    for d in full_doc.definitions:
        name = getattr(getattr(d, "name", None), "value", None)
        if isinstance(d, SchemaDefinitionNode) or name not in keep:
            continue
        if isinstance(d, ObjectTypeDefinitionNode | InterfaceTypeDefinitionNode):
            t = schema.type_map[name]
            if not (is_object_type(t) or is_interface_type(t)):
                continue
            fields = tuple(f for f in d.fields or () if f.name.value in used.get(name, ()))
            if not fields:
                continue
            d = _replace(d, fields=fields, interfaces=())
        elif not isinstance(d, InputObjectTypeDefinitionNode | EnumTypeDefinitionNode
                            | ScalarTypeDefinitionNode | UnionTypeDefinitionNode):
            continue
        out.append(print_ast(_bare(d)))
    return "\n\n".join(out) + "\n", sorted(ALL)


def header(commit: str) -> str:
    return (
        "# A subset of Linear's public GraphQL schema: packages/sdk/src/schema.graphql of the\n"
        f"# linear/linear repository at commit {commit}\n"
        "# (MIT licence, Copyright (c) 2019 Linear). Regenerate with\n"
        "# `python plugins/jr2-linear/tools/vendor_schema.py SCHEMA --commit SHA`: the fields\n"
        "# jr2's operations select, and the input types, enums and scalars they reach, whole;\n"
        "# descriptions dropped. Every operation was validated against the full schema first.\n\n"
    )


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("schema", type=Path, help="Linear's full schema.graphql")
    ap.add_argument("--commit", default="", help="the linear/linear commit it comes from")
    ap.add_argument("--check", action="store_true",
                    help="only say whether the vendored subset is what SCHEMA gives")
    args = ap.parse_args(argv)
    body, names = subset(args.schema.read_text(encoding="utf-8"))
    if args.check:
        current = OUT.read_text(encoding="utf-8")
        same = current.split("\n\n", 1)[-1] == body
        print(f"{len(names)} operations valid against {args.schema}; the vendored subset is "
              + ("up to date" if same else "OUT OF DATE: regenerate it"))
        return 0 if same else 1
    if not args.commit:
        ap.error("--commit SHA is required to write the subset")
    OUT.write_text(header(args.commit) + body, encoding="utf-8")
    print(f"{len(names)} operations valid; wrote {OUT} ({len(body):,} characters)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
