"""Retrieve (Algorithm 9 of the paper; 11 at a grouped node) written out for one view's trees.

The trees' shapes are known when the view is created, so each descent is generated as straight
PL/pgSQL: one statement a node, which finds the node's entry at its position (the bucket whose span
holds it, the entry in it, the entry's row) together with the c̃nt of every child under the row's
keys, which split the rest of the position among the children (mixed radix, the last child
fastest). No node table is read and no function is called on the way down: a position costs one
indexed statement per unit of the query (the earlier generic functions took three to four
statements and a call a level). A lookup that finds nothing is a dummy: the result is NULL.

``retrieve_tuple(root, rid, z)``: position z of {rid} x the batches of the root's children, for
the root of each tree (the batch of a row inserted into its unit). ``retrieve_key(0, 0, z)``:
position z of J0, the whole join, under tree 0's root (the refill after deletes, ``--fresh``).
A result is its atoms' rids, in the atoms' order.
"""

from __future__ import annotations

from psycopg import sql

from pgivm.systems.common import Names
from pgivm.systems.sample.layout import Layout, Node

def _pow(exponent: sql.Composable) -> sql.Composable:
    """2^exponent: c̃nt and bucket weights are powers of two, exact in numeric."""
    return sql.SQL("2::numeric ^ {}").format(exponent)


class _Descent:
    """The statements of one descent, and the variables they assign (per node: kids_N, parts_N,
    l_N, ct_N, ...)."""

    def __init__(self, names: Names, shape: Layout) -> None:
        self.names = names
        self.shape = shape
        self.by_id = {n.node: n for n in shape.nodes}
        self.lines: list[sql.Composable] = []
        self.variables: dict[str, str] = {}

    def var(self, kind: str, node: int, sql_type: str) -> sql.Identifier:
        name = f"{kind}_{node}"
        self.variables[name] = sql_type
        return sql.Identifier(name)

    def emit(self, text: str, **parts: sql.Composable) -> None:
        self.lines.append(sql.SQL("    " + text).format(**parts))

    def child_counts(self, node: Node, kids: sql.Composable) -> tuple[list[sql.Composable], list[sql.Composable], list[sql.Composable]]:
        """FROM items, select items and INTO targets for the c̃nt of each child under ``kids``."""
        joins, items, into = [], [], []
        for child, edge in zip(node.children, node.cedges):
            alias = sql.Identifier(f"c{child}")
            joins.append(sql.SQL(" JOIN {cnt} AS {a} ON {a}.node = {c} AND {a}.kid = {kids}[{e}]").format(
                cnt=self.names("cnt"), a=alias, c=sql.Literal(child), kids=kids, e=sql.Literal(edge + 1)))
            items.append(sql.SQL(", {}.ct").format(alias))
            into.append(sql.SQL(", {}").format(self.var("ct", child, "int")))
        return joins, items, into

    def children(self, node: Node, offset: sql.Identifier) -> None:
        """Split ``offset`` among the node's children (their c̃nt already read) and descend into each."""
        kids = sql.Identifier(f"kids_{node.node}")
        for i, (child, edge) in enumerate(zip(node.children, node.cedges)):
            after = node.children[i + 1:]
            shift = sql.SQL(" + ").join(sql.Identifier(f"ct_{c}") for c in after) if after else sql.SQL("0")
            z = self.var("z", child, "numeric")
            self.emit("{z} := mod(floor({offset} / {below}), {radix});", z=z, offset=offset,
                      below=_pow(sql.SQL("({})").format(shift)), radix=_pow(sql.Identifier(f"ct_{child}")))
            self.key(self.by_id[child], sql.SQL("{}[{}]").format(kids, sql.Literal(edge + 1)), z)

    def tuple(self, node: Node, rid: sql.Composable, offset: sql.Identifier) -> None:
        """Position ``offset`` of {rid} x the batches of the node's children."""
        row = sql.Identifier(f"x{node.node}")
        joins, items, into = self.child_counts(node, sql.SQL("{}.kids").format(row))
        self.emit("SELECT {x}.kids, {x}.parts{items} INTO {k}, {p}{into} FROM {rows} AS {x}{joins} WHERE {x}.rid = {rid};",
                  x=row, items=sql.SQL("").join(items), k=self.var("kids", node.node, "bigint[]"),
                  p=self.var("parts", node.node, "bigint[]"), into=sql.SQL("").join(into), rows=self.names("rows"),
                  joins=sql.SQL("").join(joins), rid=rid)
        self.emit("IF NOT FOUND THEN RETURN NULL; END IF;")
        self.children(node, offset)

    def key(self, node: Node, key: sql.Composable, z: sql.Identifier) -> None:
        """Position ``z`` of the batch of ``key`` at the node: its entries in bucket order (the
        buckets' spans laid end to end by exp; none holds z: a dummy past cnt), each 2^exp positions;
        in a group's, block m of 2^h (h: its children's exponents) is its m-th row, blocks past feq
        its padding."""
        n = node.node
        x = sql.Identifier(f"x{n}")
        span = sql.SQL(
            "(SELECT s.exp, {z} - s.start AS off FROM (SELECT exp, size, sum(size * {w}) OVER (ORDER BY exp ROWS UNBOUNDED "
            "PRECEDING) - size * {w} AS start FROM {bsize} WHERE node = {node} AND kid = {key}) AS s "
            "WHERE {z} >= s.start AND {z} < s.start + s.size * {sw}) AS b").format(
            z=z, w=_pow(sql.SQL("exp")), sw=_pow(sql.SQL("s.exp")), bsize=self.names("bsize"), node=sql.Literal(n), key=key)
        # OFFSET 0 keeps the lookup a subquery of its own, so that its index scan is on all four
        # columns (as a join, PostgreSQL may scan the key's whole bucket and filter exp and pos)
        entry = sql.SQL(" CROSS JOIN LATERAL (SELECT eid FROM {bucket} WHERE node = {node} AND kid = {key} "
                        "AND exp = b.exp AND pos = floor(b.off / {w})::bigint OFFSET 0) AS k").format(
            bucket=self.names("bucket"), node=sql.Literal(n), key=key, w=_pow(sql.SQL("b.exp")))
        offset = self.var("l", n, "numeric")
        if not node.grouped:
            joins, items, into = self.child_counts(node, sql.SQL("{}.kids").format(x))
            self.emit("SELECT {x}.kids, {x}.parts, mod(b.off, {w}){items} INTO {k}, {p}, {l}{into} "
                      "FROM {span}{entry} JOIN {rows} AS {x} ON {x}.rid = k.eid{joins};",
                      x=x, w=_pow(sql.SQL("b.exp")), items=sql.SQL("").join(items), k=self.var("kids", n, "bigint[]"),
                      p=self.var("parts", n, "bigint[]"), l=offset, into=sql.SQL("").join(into), span=span, entry=entry,
                      rows=self.names("rows"), joins=sql.SQL("").join(joins))
            self.emit("IF NOT FOUND THEN RETURN NULL; END IF;")
        else:
            g = sql.Identifier(f"g{n}")
            joins, items, into = self.child_counts(node, sql.SQL("{}.kids").format(g))
            block = self.var("h", n, "numeric")
            member = self.var("m", n, "numeric")
            self.emit("SELECT {g}.gid, {g}.kids, {g}.feq, mod(b.off, {w}){items} INTO {gid}, {k}, {feq}, {l}{into} "
                      "FROM {span}{entry} JOIN {grp} AS {g} ON {g}.gid = k.eid{joins};",
                      g=g, w=_pow(sql.SQL("b.exp")), items=sql.SQL("").join(items), gid=self.var("gid", n, "bigint"),
                      k=self.var("kids", n, "bigint[]"), feq=self.var("feq", n, "bigint"), l=offset,
                      into=sql.SQL("").join(into), span=span, entry=entry, grp=self.names("grp"), joins=sql.SQL("").join(joins))
            self.emit("IF NOT FOUND THEN RETURN NULL; END IF;")
            exponents = sql.SQL(" + ").join(sql.Identifier(f"ct_{c}") for c in node.children) if node.children else sql.SQL("0")
            self.emit("{h} := {w};", h=block, w=_pow(sql.SQL("({})").format(exponents)))
            self.emit("{m} := floor({l} / {h});", m=member, l=offset, h=block)
            self.emit("IF {m} >= {feq} THEN RETURN NULL; END IF;  -- the group's padding", m=member,
                      feq=sql.Identifier(f"feq_{n}"))
            self.emit("SELECT x.parts INTO {p} FROM {gmem} AS gm JOIN {rows} AS x ON x.rid = gm.rid "
                      "WHERE gm.gid = {gid} AND gm.pos = {m}::bigint;",
                      p=self.var("parts", n, "bigint[]"), gmem=self.names("gmem"), rows=self.names("rows"),
                      gid=sql.Identifier(f"gid_{n}"), m=member)
            self.emit("IF NOT FOUND THEN RETURN NULL; END IF;")
            self.emit("{l} := {l} - {m} * {h};", l=offset, m=member, h=block)
        self.children(node, offset)

    def result(self, tree: int) -> None:
        """The atoms' rids: each from the row of its unit's node in this tree."""
        units = len(self.shape.units)
        items = []
        for atom in range(self.shape.atoms):
            unit = self.shape.unit_of(atom).number
            items.append(sql.SQL("{}[{}]").format(sql.Identifier(f"parts_{tree * units + unit}"), sql.Literal(atom + 1)))
        self.emit("RETURN ARRAY[{items}]::bigint[];", items=sql.SQL(", ").join(items))


def _function(names: Names, name: str, params: str, branches: list[tuple[int, _Descent]], comment: str) -> sql.Composable:
    variables: dict[str, str] = {}
    for _, d in branches:
        variables.update(d.variables)
    declare = sql.SQL("").join(sql.SQL("    {} {};\n").format(sql.Identifier(v), sql.SQL(t)) for v, t in sorted(variables.items()))
    cases = sql.SQL("").join(
        sql.SQL("WHEN {} THEN\n{}\n").format(sql.Literal(node), sql.SQL("\n").join(d.lines)) for node, d in branches)
    return sql.SQL(
        "-- {comment}\n"
        "CREATE FUNCTION {f}({params}) RETURNS bigint[]\n"
        "LANGUAGE plpgsql SECURITY DEFINER STABLE SET search_path = pg_catalog, pg_temp AS $pgivm$\n"
        "DECLARE\n{declare}BEGIN\n"
        "CASE node_\n{cases}END CASE;  -- any other node: CASE_NOT_FOUND (only these are asked)\n"
        "END;\n$pgivm$").format(comment=sql.SQL(comment), f=names(name), params=sql.SQL(params), declare=declare, cases=cases)


def retrieve_functions(names: Names, shape: Layout) -> list[sql.Composable]:
    """retrieve_tuple for every tree's root, retrieve_key for J0 (tree 0's root under key 0)."""
    units = len(shape.units)
    by_id = {n.node: n for n in shape.nodes}
    tuples: list[tuple[int, _Descent]] = []
    for tree in range(units):
        root = by_id[tree * units + tree]
        d = _Descent(names, shape)
        d.tuple(root, sql.Identifier("rid_"), sql.Identifier("z"))
        d.result(tree)
        tuples.append((root.node, d))
    j0 = _Descent(names, shape)
    j0.emit("IF kid_ <> 0 THEN RETURN NULL; END IF;  -- J0 has one key")
    j0.key(by_id[0], sql.SQL("kid_"), sql.Identifier("z"))
    j0.result(0)
    return [
        _function(names, "retrieve_tuple", "node_ int, rid_ bigint, z numeric", tuples,
                  "Algorithm 9 at a tree's root: position z of {rid_} x its children's batches (retrieve.py)"),
        _function(names, "retrieve_key", "node_ int, kid_ bigint, z numeric", [(0, j0)],
                  "Algorithm 9 (11 if grouped) over J0: position z of the whole join (retrieve.py)"),
    ]
