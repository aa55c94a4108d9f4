"""IVMε for Loomis–Whitney counts of degree n ≥ 4 (Kara et al., long version, Appendix F).

The query joins n relations, R_i over every variable but A_(i−1) (indices mod n), and counts. As for
the triangle (n = 3, ``plan.py``), each R_i is partitioned on one variable, A_i, into a heavy and a
light part at θ = N^ε, and one auxiliary view per relation serves the one delta term no bounded loop
reaches:

    V_i(vars of R_i) = Σ_{A_(i−1)} Π_{j ∉ {i, i−1}} R_j^heavy · R_(i−1)^light

(Appendix F.1's case 2 defines V_1 so; its paragraph "Auxiliary Views" prints V_i with the light
parts of all relations but the next one, which leaves case 2 without a view for n ≥ 4: the case
analysis is right, the paragraph a misprint.) An update to R_i binds every variable but F = A_(i−1);
the relation partitioned on F is P = R_(i−1); every other relation (a "middle") is partitioned on a
bound variable, so its part is known before any loop: if a middle is light, a loop over its tuples at
the bound value (< 3/2·N^ε) probing the others; if all are heavy, a loop over P's heavy tuples at the
bound values (≤ 2N^(1−ε)) probing the middles, plus V_i at the bound values. Rebalancing is the
triangle's: minor moves tuple by tuple (each out of the old part's views, into the new one's), major
ones a strict repartition and every V_i recomputed; the amortization is the paper's.

The SQL is generated here from templates in ``sql/ivme/7*_lw_*.sql``: the loops depend on n and on
which relation is updated, so their bodies are composed per relation, every identifier quoted.
"""

from __future__ import annotations

from typing import Any

from psycopg import sql

from pgivm import capture
from pgivm.query.model import LoomisWhitneyCount, LwAtom
from pgivm.query.resolve import ResolvedView
from pgivm.systems.base import InstallPlan
from pgivm.systems.common import Names, analyze_plan, render
from pgivm.systems.ivme import variant


def lw_view(view: ResolvedView) -> ResolvedView:
    """The view in the shape this module plans (atoms k1..kn over variables a, b, c, ...)."""
    return variant.reshaped(view, LoomisWhitneyCount, "loomis_whitney")


def is_loomis_whitney(view: ResolvedView) -> bool:
    return variant.has_shape(view, LoomisWhitneyCount, "loomis_whitney")


matches = is_loomis_whitney  # the name every variant module gives it (ivme's registry of variants reads it)


class Relation:
    """R_i of the query with everything its SQL names: columns, partition variable, P, middles."""

    def __init__(self, query: LoomisWhitneyCount, atom: LwAtom, names: Names, types: dict[str, str]) -> None:
        self.query, self.atom, self.names, self.types = query, atom, names, types
        n = query.degree
        self.i = atom.index
        letters = query.variables
        self.pvar = letters[self.i]  # A_i
        self.free = letters[(self.i - 1) % n]  # F = A_(i-1), the variable an update of R_i leaves free
        self.columns = atom.variables  # every letter but A_(i-1), in order

    @property
    def n(self) -> int:
        return self.query.degree

    def relation(self, j: int) -> LwAtom:
        return self.query.relations[j % self.n]

    def table(self, j: int, part: str) -> sql.Identifier:
        return self.names(f"{self.relation(j).relation}_{part}")

    @property
    def p(self) -> int:
        return (self.i - 1) % self.n

    @property
    def middles(self) -> list[int]:
        return [(self.i + d) % self.n for d in range(1, self.n - 1)]

    def others_then_pvar(self) -> list[str]:
        return [c for c in self.columns if c != self.pvar] + [self.pvar]

    def ident_list(self, columns: list[str] | tuple[str, ...], prefix: str = "") -> sql.Composable:
        return sql.SQL(", ").join(sql.SQL(prefix) + sql.Identifier(c) for c in columns)  # type: ignore[operator]


def _argument(letter: str) -> sql.Composable:
    return sql.Identifier(f"x_{letter}")


def _value(letter: str, free: str, source: str) -> sql.Composable:
    """The value of a variable in a loop over tuples from ``source``: the loop's for F, else the update's."""
    return sql.SQL("{}.{}").format(sql.Identifier(source), sql.Identifier(letter)) if letter == free else _argument(letter)


def _probe(rel: Relation, j: int, part: str, source: str) -> sql.Composable:
    """R_j's multiplicity of the tuple the update and the loop's F-value bind, in ``part``."""
    atom = rel.relation(j)
    return sql.SQL("(SELECT q.mult FROM {} q WHERE {})").format(
        rel.table(j, part), sql.SQL(" AND ").join(
            sql.SQL("q.{} = {}").format(sql.Identifier(v), _value(v, rel.free, source)) for v in atom.variables))


def _known_part_probe(rel: Relation, j: int, source: str) -> sql.Composable:
    return sql.SQL("CASE WHEN {h} THEN {heavy} ELSE {light} END").format(
        h=_part_variable(rel, j), heavy=_probe(rel, j, "heavy", source), light=_probe(rel, j, "light", source))


def _part_variable(rel: Relation, j: int) -> sql.Identifier:
    return sql.Identifier("own_heavy" if j % rel.n == rel.i else f"h_{rel.relation(j).relation}")


def _bound(rel: Relation, j: int, alias: str) -> sql.Composable:
    """R_j's tuples at the update's values of every variable of R_j but F (alias.col = x_col ...)."""
    return sql.SQL(" AND ").join(sql.SQL("{}.{} = {}").format(sql.Identifier(alias), sql.Identifier(v), _argument(v))
                                 for v in rel.relation(j).variables if v != rel.free)


def _delta_q(rel: Relation) -> sql.Composable:
    """F.1's four cases, with each middle's part known: a light middle's loop, or P's heavy loop and V_i."""
    middles = rel.middles
    all_heavy = sql.SQL(" AND ").join(_part_variable(rel, j) for j in middles)
    heavy_loop = sql.SQL(
        "        delta_q := coalesce((SELECT sum(src.mult * {probes}) FROM {p_heavy} src WHERE {bound}), 0)\n"
        "                 + coalesce((SELECT v.mult FROM {v_k} v WHERE {match}), 0);").format(
        probes=sql.SQL(" * ").join(_probe(rel, j, "heavy", "src") for j in middles),
        p_heavy=rel.table(rel.p, "heavy"), bound=_bound(rel, rel.p, "src"), v_k=rel.names(f"v_{rel.atom.relation}"),
        match=sql.SQL(" AND ").join(sql.SQL("v.{} = {}").format(sql.Identifier(c), _argument(c)) for c in rel.columns))
    branches = [sql.SQL("    IF {} THEN\n        delta_q := 0;  -- a middle has no tuple at the bound value").format(
        sql.SQL(" OR ").join(sql.SQL("{} IS NULL").format(_part_variable(rel, j)) for j in middles)),
        sql.SQL("    ELSIF {} THEN  -- every middle heavy: P's heavy F-values (<= 2 N^(1-eps)), then V_i for P's light part\n{}").format(
            all_heavy, heavy_loop)]
    for j in middles:  # the first light middle drives: < 3/2 N^eps tuples at its bound partition value
        others = [_known_part_probe(rel, k, "src") for k in middles if k != j]
        p_total = sql.SQL("coalesce({}, {})").format(_probe(rel, rel.p, "heavy", "src"), _probe(rel, rel.p, "light", "src"))
        branches.append(sql.SQL(
            "    ELSIF NOT {h} THEN  -- R{name} light: its tuples at the bound value, probing the others and P\n"
            "        delta_q := coalesce((SELECT sum(src.mult * {probes}) FROM {light} src WHERE {bound}), 0);").format(
            h=_part_variable(rel, j), name=sql.SQL(str(j + 1)),  # type: ignore[arg-type]
            probes=sql.SQL(" * ").join([*others, p_total]), light=rel.table(j, "light"), bound=_bound(rel, j, "src")))
    return sql.SQL("\n").join([*branches, sql.SQL("    END IF;")])


def _view_delta(rel: Relation, k: int, driver: int, driver_part: str, members: list[int]) -> sql.Composable:
    """V_k += m * (R_i's change) * ..., looping over ``driver``'s tuples in ``driver_part`` at the
    bound values, probing the heavy ``members``; entries that reach 0 deleted by key."""
    target = rel.relation(k)
    v_k = rel.names(f"v_{target.relation}")
    keys = target.variables
    product = sql.SQL(" * ").join([sql.SQL("m"), sql.SQL("src.mult"), *(_probe(rel, j, "heavy", "src") for j in members)])
    return sql.SQL(
        "        WITH changed AS (\n"
        "            INSERT INTO {v_k} AS v ({keys}, mult)\n"
        "            SELECT {values}, d.mult FROM (SELECT src.{free} AS f, {product} AS mult\n"
        "                                           FROM {driver} src WHERE {bound}) d\n"
        "             WHERE d.mult IS NOT NULL\n"
        "            ON CONFLICT ({keys}) DO UPDATE SET mult = v.mult + EXCLUDED.mult\n"
        "            RETURNING v.{free}, v.mult)\n"
        "        SELECT array_agg({free}) INTO zeros_f FROM changed WHERE mult = 0;\n"
        "        IF zeros_f IS NOT NULL THEN\n"
        "            DELETE FROM {v_k} WHERE {match} AND {free} = ANY (zeros_f);\n"
        "        END IF;").format(
        v_k=v_k, keys=rel.ident_list(keys), free=sql.Identifier(rel.free), product=product,
        values=sql.SQL(", ").join(sql.SQL("d.f") if c == rel.free else _argument(c) for c in keys),
        driver=rel.table(driver, driver_part), bound=_bound(rel, driver, "src"),
        match=sql.SQL(" AND ").join(sql.SQL("{} = {}").format(sql.Identifier(c), _argument(c)) for c in keys if c != rel.free))


def _views(rel: Relation) -> sql.Composable:
    """The auxiliary views' deltas: R_i heavy is a heavy member of V_k for k ∉ {i, i+1}; light, the
    light member of V_(i+1). A block runs only if every member with a bound partition value has that
    value in the part the view reads (else the member has no tuple there and the delta is 0)."""
    n, i, p = rel.n, rel.i, rel.p
    heavy_blocks = []
    for k in range(n):
        if k in (i, (i + 1) % n):
            continue
        light = (k - 1) % n
        members = [j for j in range(n) if j not in (k, light, i)]
        ready = [sql.SQL("NOT {}").format(_part_variable(rel, light))]
        ready += [_part_variable(rel, j) for j in members if j != p]
        heavy_blocks.append(sql.SQL("    IF {ready} THEN  -- V_{k}: loop over R{light_name}'s light tuples\n{delta}\n    END IF;").format(
            ready=sql.SQL(" AND ").join(ready), k=sql.SQL(str(k + 1)),  # type: ignore[arg-type]
            light_name=sql.SQL(str(light + 1)),  # type: ignore[arg-type]
            delta=_view_delta(rel, k, light, "light", members)))
    k = (i + 1) % n
    members = [j for j in range(n) if j not in (k, i, p)]
    ready = sql.SQL(" AND ").join([sql.SQL("TRUE"), *(_part_variable(rel, j) for j in members)])
    light_block = sql.SQL("    IF {ready} THEN  -- V_{k}: loop over P's heavy tuples\n{delta}\n    END IF;").format(
        ready=ready, k=sql.SQL(str(k + 1)), delta=_view_delta(rel, k, p, "heavy", members))  # type: ignore[arg-type]
    return sql.SQL("    IF heavy THEN\n{}\n    ELSE\n{}\n    END IF;").format(
        sql.SQL("\n").join(heavy_blocks) if heavy_blocks else sql.SQL("    NULL;"), light_block)


def _natural_join(rel: Relation, parts: list[tuple[int, str]],
                  extra: tuple[tuple[str, ...], sql.Composable] | None = None,
                  ) -> tuple[sql.Composable, dict[str, sql.Composable], sql.Composable]:
    """FROM ... JOIN ... ON the shared variables of the given (relation, part) pairs (part "all":
    both parts), after ``extra`` (variables, source) if given; each variable's first column; the
    product of the multiplicities."""
    sources: list[tuple[tuple[str, ...], sql.Composable]] = [extra] if extra is not None else []
    for j, part in parts:
        atom = rel.relation(j)
        sources.append((atom.variables, rel.table(j, part) if part != "all" else sql.SQL(
            "(SELECT {c}, mult FROM {h} UNION ALL SELECT {c}, mult FROM {l})").format(
            c=rel.ident_list(atom.variables), h=rel.table(j, "heavy"), l=rel.table(j, "light"))))
    first: dict[str, sql.Composable] = {}
    pieces: list[sql.Composable] = []
    for position, (variables, source) in enumerate(sources):
        alias = sql.Identifier(f"t{position}")
        shared = [sql.SQL("{}.{} = {}").format(alias, sql.Identifier(v), first[v]) for v in variables if v in first]
        for v in variables:
            first.setdefault(v, sql.SQL("{}.{}").format(alias, sql.Identifier(v)))
        pieces.append(sql.SQL("{} {}").format(source, alias) if position == 0 else
                      sql.SQL("JOIN {} {} ON {}").format(source, alias, sql.SQL(" AND ").join(shared)))
    product = sql.SQL(" * ").join(sql.SQL("{}.mult").format(sql.Identifier(f"t{p}")) for p in range(len(sources)))
    return sql.SQL("\n      ").join(pieces), first, product


def _batch_delta_q(rel: Relation) -> sql.Composable:
    """delta Q of a batch: its tuples joined with every other relation (both parts), on the state
    before the batch (R_i is not in its own delta)."""
    source, _, product = _natural_join(rel, [(j, "all") for j in range(rel.n) if j != rel.i],
                                       (rel.columns, rel.names(f"{rel.atom.relation}_delta")))
    return sql.SQL("SELECT coalesce(sum({}), 0) INTO delta_q\n      FROM {}").format(product, source)


def _batch_views(rel: Relation) -> sql.Composable:
    """The views' deltas of a batch, set at a time: its heavy-bound tuples into every V_k but V_i and
    V_(i+1), its light-bound ones into V_(i+1) (the single-tuple rule, joined instead of looped)."""
    n, i = rel.n, rel.i
    delta = rel.names(f"{rel.atom.relation}_delta")
    statements = []
    targets = [(k, "heavy") for k in range(n) if k not in (i, (i + 1) % n)] + [((i + 1) % n, "light")]
    for k, part in targets:
        light = (k - 1) % n
        parts = [(j, "heavy") for j in range(n) if j not in (k, light, i)]
        if part == "heavy":
            parts.append((light, "light"))
        batch = sql.SQL("(SELECT {}, mult FROM {} WHERE {}heavy)").format(
            rel.ident_list(rel.columns), delta, sql.SQL("" if part == "heavy" else "NOT "))
        source, first, product = _natural_join(rel, parts, (rel.columns, batch))
        target = rel.relation(k)
        keys = sql.SQL(", ").join(first[c] for c in target.variables)
        statements.append(sql.SQL(
            "    -- V_{number} from the batch's {part} tuples; entries that reach 0 go (a partial index finds them)\n"
            "    INSERT INTO {v_k} AS v ({columns}, mult)\n"
            "    SELECT {keys}, sum({product})\n"
            "      FROM {source}\n"
            "     GROUP BY {keys}\n"
            "    HAVING sum({product}) <> 0\n"
            "    ON CONFLICT ({columns}) DO UPDATE SET mult = v.mult + EXCLUDED.mult;\n"
            "    DELETE FROM {v_k} WHERE mult = 0;").format(
            number=sql.SQL(str(k + 1)), part=sql.SQL(part), v_k=rel.names(f"v_{target.relation}"),  # type: ignore[arg-type]
            columns=rel.ident_list(target.variables), keys=keys, product=product, source=source))
    return sql.SQL("\n").join(statements)


def _v_definition(rel: Relation) -> sql.Composable:
    """V_i from the parts: Π_{j ∉ {i, i−1}} R_j^heavy · R_(i−1)^light, summed over A_(i−1)."""
    n, i = rel.n, rel.i
    parts = [(j, "heavy") for j in range(n) if j not in (i, (i - 1) % n)] + [((i - 1) % n, "light")]
    source, first, product = _natural_join(rel, parts)
    keys = sql.SQL(", ").join(first[c] for c in rel.columns)
    return sql.SQL("    SELECT {keys}, sum({product})\n      FROM {source}\n     GROUP BY {keys}\n    HAVING sum({product}) <> 0").format(
        keys=keys, product=product, source=source)


# From this degree on, the state's functions join their tables in the order written: PostgreSQL's
# planner searches the orders of a join of n parts, each pair joined on n−2 columns, for a long
# time (EXPLAIN of the plain recount over empty tables: 0.27 s at n = 7, 3.5 s at 8, 20.4 s at 10;
# create of an empty degree-8 view 24 s, 1.8 s in the order written). Below it, the planner's
# choice (measured in `bench ivme-family`) stays.
WRITTEN_JOIN_ORDER_FROM = 7


def join_order(degree: int) -> sql.Composable:
    """The SET clauses of a function that joins in the order written, at degree 7 and up."""
    if degree < WRITTEN_JOIN_ORDER_FROM:
        return sql.SQL("")
    return sql.SQL("\nSET join_collapse_limit = 1 SET from_collapse_limit = 1")


def _relation_params(rel: Relation) -> dict[str, sql.Composable]:
    names, k = rel.names, rel.atom.relation
    others = [j for j in range(rel.n) if j != rel.p]  # every relation whose partition variable an update binds
    bound = [j for j in others if j != rel.i]  # those but R_i: their parts are views_k's parameters
    upper = k.upper()
    return {
        "state": names("state"), "result": names("result"), "major_rebalance": names("major_rebalance"),
        "join_order": join_order(rel.n),
        "k_heavy": names(f"{k}_heavy"), "k_light": names(f"{k}_light"), "k_degree": names(f"{k}_degree"),
        "k_delta": names(f"{k}_delta"), "v_k": names(f"v_{k}"),
        "apply_k": names(f"apply_{k}"), "views_k": names(f"views_{k}"),
        "views_moved_k": names(f"views_moved_{k}"), "move_k": names(f"move_{k}"),
        "apply_batch_k": names(f"apply_batch_{k}"), "repartition_k": names(f"repartition_{k}"),
        "recompute_v_k": names(f"recompute_v_{k}"), "clear_k": names(f"clear_{k}"),
        "column_defs": sql.SQL(",\n").join(sql.SQL("    {} {} NOT NULL").format(sql.Identifier(c), sql.SQL(rel.types[c]))  # type: ignore[arg-type]
                                           for c in rel.columns),
        "columns": rel.ident_list(rel.columns), "k_columns": rel.ident_list(rel.columns, "k."),
        "others_then_pvar": rel.ident_list(rel.others_then_pvar()),
        "pvar_then_others": rel.ident_list([rel.pvar] + [c for c in rel.columns if c != rel.pvar]),
        "pvar": sql.Identifier(rel.pvar), "pvar_type": sql.SQL(rel.types[rel.pvar]),  # type: ignore[arg-type]
        "pvar_argument": _argument(rel.pvar),
        "parameters": sql.SQL(", ").join(sql.SQL("{} {}").format(_argument(c), sql.SQL(rel.types[c])) for c in rel.columns),  # type: ignore[arg-type]
        "parameter_types": sql.SQL(", ").join(sql.SQL(rel.types[c]) for c in rel.columns),  # type: ignore[arg-type]
        "arguments": sql.SQL(", ").join(_argument(c) for c in rel.columns),
        "moved_arguments": rel.ident_list(rel.columns, "moved."),
        "delta_match": sql.SQL(" AND ").join(sql.SQL("p.{c} = d.{c}").format(c=sql.Identifier(c)) for c in rel.columns),
        "match_arguments": sql.SQL(" AND ").join(sql.SQL("{} = {}").format(sql.Identifier(c), _argument(c)) for c in rel.columns),
        "part_declarations": sql.SQL("\n").join(sql.SQL("    {} boolean;").format(_part_variable(rel, j)) for j in bound),
        **_part_lookups(rel, others, ""),
        **_part_lookups(rel, bound, "view_"),  # views_moved_k: R_i's own part is a parameter
        "view_part_parameters": sql.SQL(", ").join(sql.SQL("{} boolean").format(_part_variable(rel, j)) for j in bound),
        "free_type": sql.SQL(rel.types[rel.free]),  # type: ignore[arg-type]
        "delta_q": _delta_q(rel),
        "views": _views(rel),
        "batch_delta_q": _batch_delta_q(rel),
        "batch_views": _batch_views(rel),
        "v_k_definition": _v_definition(rel),
        "k_heavy_comment": sql.Literal(f"IVMε (Loomis-Whitney): heavy part of {upper}, partitioned on {rel.pvar.upper()}"),
        "k_light_comment": sql.Literal(f"IVMε (Loomis-Whitney): light part of {upper}, partitioned on {rel.pvar.upper()}"),
        "k_degree_comment": sql.Literal(f"IVMε: per {rel.pvar.upper()}-value of {upper}, its degree and whether it is heavy"),
        "v_k_comment": sql.Literal(f"IVMε auxiliary view V_{k[1:]} over {upper}'s variables: serves updates to {upper}"),
        "k_delta_comment": sql.Literal(f"pgivm scratch: the net change of {upper} by the current multi-row statement"),
        "apply_k_comment": sql.Literal(f"IVMε ApplyUpdate + OnUpdate for a single-tuple update to {upper} (Appendix F)"),
    }


def _part_lookups(rel: Relation, among: list[int], prefix: str) -> dict[str, sql.Composable]:
    """One SELECT's pieces that read each relation's part of the value the update binds for its
    partition variable (a LEFT JOIN per relation of ``among``: NULL when the value is absent)."""
    return {
        f"{prefix}part_columns": sql.SQL(", ").join(sql.SQL("{}.heavy").format(sql.Identifier(f"d{j}")) for j in among),
        f"{prefix}part_variables": sql.SQL(", ").join(_part_variable(rel, j) for j in among),
        f"{prefix}part_joins": sql.SQL("\n").join(
            sql.SQL("      LEFT JOIN {} {} ON {}.{} = {}").format(
                rel.table(j, "degree"), sql.Identifier(f"d{j}"), sql.Identifier(f"d{j}"),
                sql.Identifier(rel.query.variables[j]), _argument(rel.query.variables[j])) for j in among),
    }


def relations(view: ResolvedView, names: Names) -> list[Relation]:
    query = view.query
    return [Relation(query, atom, names, view.variable_types) for atom in query.relations]


def _parts(rels: list[Relation]) -> list[sql.Composable]:
    """Every relation's heavy and light part: the tables whose rows make |D|."""
    return [r.table(r.i, part) for r in rels for part in ("heavy", "light")]


def _view_params(view: ResolvedView, names: Names, name: str) -> dict[str, sql.Composable]:
    rels = relations(view, names)
    parts = [(j, "all") for j in range(view.query.degree)]
    source, _, product = _natural_join(rels[0], parts)
    sizes = variant.stored_tuples(_parts(rels))
    return {
        "schema": names.schema_id, "state": names("state"), "result": names("result"),
        "join_order": join_order(view.query.degree),
        "major_rebalance": names("major_rebalance"), "count_from_state": names("count_from_state"),
        "restart": names("restart"),
        "repartitions": sql.SQL("\n").join(sql.SQL("    PERFORM {}();").format(names(f"repartition_{r.atom.relation}")) for r in rels),
        "recomputes": sql.SQL("\n").join(sql.SQL("    PERFORM {}();").format(names(f"recompute_v_{r.atom.relation}")) for r in rels),
        "join": source, "product": product, "sizes": sizes,
        "schema_comment": sql.Literal(f"pgivm state of view {name} (strategy ivme, Loomis-Whitney of degree "
                                      f"{view.query.degree}): {view.query.sql}"),
        "result_comment": sql.Literal(f"pgivm: the maintained result of view {name}"),
    }


def capture_atoms(view: ResolvedView, name: str, params: dict[str, Any]) -> dict[Any, list[capture.CaptureAtom]]:
    return variant.capture_atoms(lw_view(view))


def capture_triggers(view: ResolvedView, name: str, table: Any) -> list[capture.CaptureTrigger]:
    return variant.capture_triggers(lw_view(view), name, table)


def build_plan(view: ResolvedView, name: str) -> sql.Composable:
    """Each relation loaded into its light part from its table, then restart (N, the strict partition, the views, the count)."""
    names = Names.of(name)
    loads = []
    for atom in view.query.relations:
        base = view.base_of(atom.table)
        columns = sql.SQL(", ").join(variant.capture_atom(view, atom).read("base"))
        loads.append(sql.SQL(
            "INSERT INTO {light} ({letters}, mult) SELECT {columns}, count(*) FROM {table} base WHERE {guard} AND {not_null} "
            "GROUP BY {positions};\n"
            "INSERT INTO {degree} ({pvar}, degree, heavy) SELECT {pvar}, count(*), false FROM {light} GROUP BY {pvar}").format(
            light=names(f"{atom.relation}_light"), degree=names(f"{atom.relation}_degree"),
            letters=sql.SQL(", ").join(sql.Identifier(v) for v in atom.variables), columns=columns, table=base.ident,
            guard=base.guard("base"), pvar=sql.Identifier(view.query.variables[atom.index]),
            not_null=capture.all_not_null("base", atom.columns),
            positions=sql.SQL(", ").join(sql.SQL(str(p)) for p in range(1, len(atom.columns) + 1))))  # type: ignore[arg-type]
    return sql.SQL(";\n").join([*loads, sql.SQL("SELECT {}()").format(names("restart"))])


def state_tables(view: ResolvedView) -> list[str]:
    return [f"{a.relation}_{part}" for a in view.query.relations for part in ("heavy", "light", "degree")] + \
        [f"v_{a.relation}" for a in view.query.relations]


def plan(view: ResolvedView, name: str, view_schema: str, params: dict[str, Any]) -> InstallPlan:
    """The state, the maintenance functions, the build, the triggers, the view (as the triangle's)."""
    view = lw_view(view)
    names = Names.of(name)
    rels = relations(view, names)
    view_params = _view_params(view, names, name)
    state: list[sql.Composable] = [render(__package__, "00_view_state.sql", view_params)]
    state.append(sql.SQL("INSERT INTO {} (epsilon, n, theta, db_size) VALUES ({}, 1, 1, 0); INSERT INTO {} (count) VALUES (0)").format(
        names("state"), sql.Literal(float(params["epsilon"])), names("result")))
    state += [render(__package__, "70_lw_relation_tables.sql", _relation_params(r)) for r in rels]
    functions = [render(__package__, "72_lw_relation_functions.sql", _relation_params(r)) for r in rels]
    functions.append(render(__package__, "74_lw_view_functions.sql", view_params))
    build = [build_plan(view, name), analyze_plan(names, state_tables(view))]
    return variant.install_plan(view, name, view_schema, params, state, functions, build)


# --- status, verify, explain --------------------------------------------------------------------


def verify(conn: Any, view: ResolvedView, name: str, strict: bool = False) -> list[Any]:
    """Every invariant of the state, checked against the base tables."""
    from pgivm.systems.common import checks, run_checks

    view = lw_view(view)
    names = Names.of(name)
    if view.query.degree >= WRITTEN_JOIN_ORDER_FROM:  # the checks join n parts: as the functions do
        conn.execute("SET LOCAL join_collapse_limit = 1; SET LOCAL from_collapse_limit = 1")
    rels = relations(view, names)
    named = variant.view_checks(names, _parts(rels))
    for rel in rels:
        base = view.base_of(rel.atom.table)
        params = {**_relation_params(rel), "base_table": base.ident, "base_guard": base.guard("base"),
                  "base_columns": sql.SQL(", ").join(variant.capture_atom(view, rel.atom).read("base")),
                  "base_not_null": capture.all_not_null("base", rel.atom.columns)}
        named += [(f"R{rel.i + 1}.{check}", query) for check, query in checks(__package__, "76_lw_verify_relation.sql", params)
                  if check != "strict_partition" or strict]
    return run_checks(conn, named)


def explain_lines(view: ResolvedView, state: dict[str, Any]) -> list[str]:
    view = lw_view(view)
    query = view.query
    rels = [f"R{a.index + 1}({', '.join(v.upper() for v in a.variables)}) = {a.alias}({', '.join(a.columns)}), "
            f"partitioned on {query.variables[a.index].upper()}" for a in query.relations]
    return [f"Loomis-Whitney count of degree {query.degree} (Kara et al., long version, Appendix F, Theorem 25): "
            f"each relation misses one variable", *(f"  {line}" for line in rels),
            f"partitions: heavy at degree >= θ = N^ε (ε = {state['epsilon']:g}, N = {state['n']}, θ = {state['theta']:.2f}); "
            "auxiliary views V_i = Σ_(A_(i-1)) of every other relation's heavy part but R_(i-1), and R_(i-1)'s light part",
            "update: O(N^max(ε, 1-ε)) amortized per single-row change; space O(N^(1+min(ε, 1-ε))); a multi-row "
            "statement above the batch threshold set at a time (its tuples joined with the other relations)"]


def relation_rows(conn: Any, name: str) -> list[list[Any]]:
    """Per relation k1..kn of a Loomis–Whitney view: values, heavy values, heavy and light tuples."""
    names = Names.of(name)
    rows = []
    j = 1
    while conn.execute("SELECT to_regclass(%s) IS NOT NULL", [sql.Identifier(names.schema, f"k{j}_degree").as_string(conn)]).fetchone()[0]:
        row = conn.execute(sql.SQL("SELECT count(*) FILTER (WHERE heavy), count(*), (SELECT count(*) FROM {h}), "
                                   "(SELECT count(*) FROM {l}) FROM {d}").format(
            h=names(f"k{j}_heavy"), l=names(f"k{j}_light"), d=names(f"k{j}_degree"))).fetchone()
        rows.append([f"R{j}", row[1], row[0], row[2], row[3]])
        j += 1
    return rows
