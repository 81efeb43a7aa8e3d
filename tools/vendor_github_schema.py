"""Regenerate the subset of GitHub's GraphQL schema that jr2's queries use, or check it.

    python tools/vendor_github_schema.py SCHEMA --commit SHA   # write the subset
    python tools/vendor_github_schema.py SCHEMA --check        # compare, write nothing

SCHEMA is `schema.graphql` of the public `octokit/graphql-schema` repository (MIT licence), as a
path: GitHub's schema of api.github.com as its GraphQL endpoint serves it in SDL (that
repository's `bin/download.js`). Take it from the `schema-update` branch (`--branch`, the
default), which a bot refreshes from GitHub several times a day; `main` holds the last reviewed
release, which can lag by months (the one of February 2025 has no `Issue.blocking`). The script

1. reads GitHub's SDL as GitHub writes it: a field a type repeats identically is kept once (a
   repeat that differs stops the script), and the full schema is built without graphql-core's
   newer rule that an implementation's field is deprecated only with its interface's (GitHub's
   schema breaks it on fields jr2 does not ask for);
2. validates every query shape jr2 sends (`jr2_sources.trackers.github.pulls.every_query`)
   against that FULL schema (it stops on the first error: a query GitHub would refuse);
3. keeps, of the output types, only the fields those queries select (with their arguments as
   GitHub declares them); an interface a kept field returns keeps the fields selected on it,
   or when none is (`Node`, the type of `nodes(ids:)`) its scalar fields without arguments, and
   each kept type implementing it keeps those too; every input type, enum and scalar they
   reach is kept whole;
4. drops the descriptions and writes the definitions in GitHub's order, under a header naming
   the source, branch, commit and licence, to `fixtures/github/graphql/schema.graphql`.

Every definition kept is GitHub's own, so a query valid against the subset is valid against the
full schema. The subset is a fixed point (the script run on it gives it again): the tests check
that, and the fake GitHub (`jr2_sources/testing/fakes/github_graphql.py`) refuses any query the
subset does not validate, so a query jr2 changes without regenerating fails them.
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
    is_leaf_type,
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
    UnionTypeDefinitionNode,
)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "fixtures" / "github" / "graphql" / "schema.graphql"
sys.path.insert(0, str(ROOT))

from jr2_sources.trackers.github.pulls import every_query  # noqa: E402


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


def github_sdl(text: str) -> DocumentNode:
    """GitHub's SDL with a field each type repeats kept once (only identical repeats)."""
    doc = parse(text)
    definitions = []
    for d in doc.definitions:
        fields = getattr(d, "fields", None) or ()
        first: dict[str, Any] = {}
        for f in fields:
            kept = first.setdefault(f.name.value, f)
            if kept is not f and print_ast(_bare(kept)) != print_ast(_bare(f)):
                raise SystemExit(f"{d.name.value}.{f.name.value} is defined twice, differently")
        definitions.append(_replace(d, fields=tuple(first.values()))
                           if len(first) < len(fields) else d)
    return DocumentNode(definitions=tuple(definitions))


def build(doc: DocumentNode) -> GraphQLSchema:
    """GitHub's schema from its SDL, as GitHub serves it (see the module notes, step 1)."""
    return build_ast_schema(doc, assume_valid=True)


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


def kept_fields(schema: GraphQLSchema, used: dict[str, set[str]]) -> dict[str, set[str]]:
    """Output type name -> the fields kept: those selected, and those of the interfaces a kept
    field returns (see the module notes, step 3) on the interface and its kept implementations."""
    kept = {name: set(fields) for name, fields in used.items()}
    for name, fields in used.items():
        for fname in fields:
            t = get_named_type(schema.type_map[name].fields[fname].type)  # type: ignore[union-attr]
            if is_interface_type(t) and t.name not in kept:
                kept[t.name] = {f for f, d in t.fields.items()  # type: ignore[union-attr]
                                if not d.args and is_leaf_type(get_named_type(d.type))}
    changed = True
    while changed:  # an implementation (object or interface) keeps its interfaces' fields
        changed = False
        for name in list(kept):
            t = schema.type_map[name]
            for i in getattr(t, "interfaces", ()):
                if i.name in kept and not kept[i.name] <= kept[name]:
                    kept[name] |= kept[i.name]
                    changed = True
    return kept


def reached(schema: GraphQLSchema, kept: dict[str, set[str]]) -> set[str]:
    """Every named type the kept fields and their arguments reach (input types whole)."""
    names: set[str] = set(kept)
    todo: list[str] = []
    for tname, fields in kept.items():
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


def subset(full_text: str) -> tuple[str, list[str]]:
    """The subset SDL and the names of the queries validated."""
    full_doc = github_sdl(full_text)
    schema = build(full_doc)
    docs: list[DocumentNode] = []
    queries = every_query()
    for name, text in queries.items():
        doc = parse(text)
        errors = validate(schema, doc)
        if errors:
            raise SystemExit(f"jr2's {name} query is not valid against GitHub's schema: "
                             f"{errors[0].message}")
        docs.append(doc)
    kept = kept_fields(schema, used_fields(schema, docs))
    keep = reached(schema, kept)
    out = []
    for d in full_doc.definitions:
        name = getattr(getattr(d, "name", None), "value", None)
        if name not in keep:
            continue
        if isinstance(d, ObjectTypeDefinitionNode | InterfaceTypeDefinitionNode):
            t = schema.type_map[name]
            if not (is_object_type(t) or is_interface_type(t)):
                continue
            fields = tuple(f for f in d.fields or () if f.name.value in kept.get(name, ()))
            interfaces = tuple(i for i in d.interfaces or () if i.name.value in kept)
            d = _replace(d, fields=fields, interfaces=interfaces)
        elif isinstance(d, UnionTypeDefinitionNode):
            members = tuple(m for m in d.types or () if m.name.value in keep)
            if not members:
                raise SystemExit(f"{name}: no member of this union is kept")
            d = _replace(d, types=members)
        elif not isinstance(d, InputObjectTypeDefinitionNode | EnumTypeDefinitionNode
                            | ScalarTypeDefinitionNode):
            continue
        out.append(print_ast(_bare(d)))
    return "\n\n".join(out) + "\n", sorted(queries)


def header(branch: str, commit: str) -> str:
    return (
        "# A subset of GitHub's public GraphQL schema (api.github.com): schema.graphql of the\n"
        f"# octokit/graphql-schema repository, branch {branch}, at commit\n"
        f"# {commit} (MIT licence: LICENSE.md there).\n"
        "# Regenerate with `python tools/vendor_github_schema.py SCHEMA --commit SHA`: the\n"
        "# fields jr2's queries select, the fields of the interfaces they return, and the input\n"
        "# types, enums and scalars they reach, whole; descriptions dropped. Every query was\n"
        "# validated against the full schema first.\n\n"
    )


def body_of(text: str) -> str:
    """A vendored file without its header."""
    return text.split("\n\n", 1)[-1]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("schema", type=Path, help="octokit/graphql-schema's schema.graphql")
    ap.add_argument("--commit", default="", help="the octokit/graphql-schema commit it is from")
    ap.add_argument("--branch", default="schema-update", help="the branch of that commit")
    ap.add_argument("--check", action="store_true",
                    help="only say whether the vendored subset is what SCHEMA gives")
    args = ap.parse_args(argv)
    body, names = subset(args.schema.read_text(encoding="utf-8"))
    if args.check:
        same = body_of(OUT.read_text(encoding="utf-8")) == body
        print(f"{len(names)} queries valid against {args.schema}; the vendored subset is "
              + ("up to date" if same else "OUT OF DATE: regenerate it"))
        return 0 if same else 1
    if not args.commit:
        ap.error("--commit SHA is required to write the subset")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(header(args.branch, args.commit) + body, encoding="utf-8")
    print(f"{len(names)} queries valid; wrote {OUT} ({len(body):,} characters)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
