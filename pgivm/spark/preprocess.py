"""``pgivm create --preprocess spark``: the IVMε state computed in Spark, written over JDBC.

Mirrors the build (``sql/ivme/45_relation_build.sql``, then ``restart()`` of
``sql/ivme/30_view_maintenance.sql``) exactly:

* K = one row per distinct (X, Y) of its base table (NULL join columns skipped) with its
  multiplicity (the number of duplicate rows);
* |D| = the number of distinct tuples over R, S, T; N = 2|D| + 1; θ = N^ε (computed by PostgreSQL's
  ``power(n::float8, epsilon)``, as ``major_rebalance()`` does);
* degree(x) = distinct tuples of K with that X-value; heavy iff degree >= θ, or always when ε = 0;
* V_RS(a,c) = Σ_b R_heavy(a,b)·S_light(b,c), V_ST(b,a) = Σ_c S_heavy·T_light,
  V_TR(c,b) = Σ_a T_heavy·R_light, zero sums dropped;
* the count over the heavy/light decomposition: V_RS⋈T + V_ST⋈R + V_TR⋈S + hhh + lll.

The integration: this is IVMε's ``spark`` build provider (``pgivm.systems.ivme.SparkBuild``).
``command.create`` runs the install plan in its transaction as usual, except the build phase
(``ivme.build_plan``: each relation loaded, then ``restart()``), which is replaced: while that transaction
holds SHARE ROW EXCLUSIVE locks on the base tables (writers wait, readers don't), Spark reads the
base tables over JDBC with partitioned reads, computes the state, and writes it into unlogged
staging tables in a scratch schema ``pgivm_stage_<hex>``; the locked transaction then copies them
into the state tables, sets ε, N, θ, |D| and the count, drops the scratch schema, and goes on with
the plan (ANALYZE, triggers, the user's view). Nothing can change between the read and the
triggers, so the triggers start from an exact state.

The scratch schema is created on a side connection (Spark's JDBC connections must see it), so it
is committed at once, outside the caller's transaction; the DROP of it inside that transaction
is undone if the transaction rolls back. ``scratch_schemas`` (around the caller's transaction)
therefore drops every scratch schema of a failed ``create`` once the rollback has released the
transaction's locks: nothing of a failed build is left behind.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from pgivm import capture
from pgivm.connection import connect
from pgivm.errors import PgivmError
from pgivm.query.model import VARIABLES
from pgivm.query.resolve import ResolvedView
from pgivm.systems.common import Names

RELATIONS = ("r", "s", "t")
NEXT = {"r": "s", "s": "t", "t": "r"}
PREVIOUS = {"r": "t", "s": "r", "t": "s"}
AUX_VIEW = {"r": "v_rs", "s": "v_st", "t": "v_tr"}
INTEGER_TYPES = {"smallint", "integer", "bigint"}
# Spark joins any other value by its text: exact only for types whose equal values print alike
# (numeric's 1.0 = 1.00, float's -0 = 0, interval's '1 day' = '24 hours' do not; timestamptz prints
# in the session's time zone, which Spark's JDBC session need not share)
TEXT_EXACT_TYPES = ("smallint", "integer", "bigint", "text", "character varying", "date", "boolean", "uuid", "bytea",
                    "timestamp without time zone")


def inexact_type(view: ResolvedView) -> str | None:
    """A join variable's type (a packed one's field's) whose text Spark would join inexactly, or None."""
    types = [t for fields in view.packs.values() for _, t in fields]
    types += [t for v, t in view.variable_types.items() if v not in view.packs]
    return next((t for t in types if not t.startswith(TEXT_EXACT_TYPES)), None)
READ_PARTITIONS = 4
WRITE_PARTITIONS = 4
BATCH_SIZE = 10_000

last_timings: dict[str, float] = {}  # seconds of the last Spark build, for reports and tests


@dataclass
class JdbcTarget:
    url: str
    props: dict[str, str]

    @classmethod
    def of(cls, conn: psycopg.Connection) -> JdbcTarget:
        from pgivm.spark.session import jdbc_url_from_dsn

        url, props = jdbc_url_from_dsn(conn.info.dsn)
        if conn.info.password and "password" not in props:
            props["password"] = conn.info.password
        # Spark's sessions read base tables by name: a fixed search_path, and a row-security policy
        # an error rather than code running with this role's rights (each read also names tableoid).
        props["options"] = "-c search_path=pg_catalog,pg_temp -c row_security=off"
        return cls(url, props)

    def write(self, df: Any, table: str) -> None:
        (df.repartition(WRITE_PARTITIONS).write.mode("overwrite")
           .option("batchsize", BATCH_SIZE)
           .option("numPartitions", WRITE_PARTITIONS)
           .jdbc(self.url + "?reWriteBatchedInserts=true", table, properties=self.props))


def read_atom(spark: Any, conn: psycopg.Connection, view: ResolvedView, atom: Any, jdbc: JdbcTarget) -> Any:
    """The base table's rows as the relation's variables (a bag; NULL join columns skipped): integer
    variables as bigint, read in partitions of the first one; others as text, in one partition."""
    from pgivm.systems.ivme.variant import capture_atom  # (the systems' package imports this module's users)

    integer = all(view.variable_types[v] in INTEGER_TYPES for v in atom.variables)
    cast = sql.SQL("::bigint" if integer else "::text")
    base = view.base_of(atom.table)
    query = sql.SQL("(SELECT {items} FROM {table} base WHERE {guard} AND {not_null}) pgivm_q").format(
        items=sql.SQL(", ").join(sql.SQL("({}){} AS {}").format(expression, cast, sql.Identifier(v))
                                 for expression, v in zip(capture_atom(view, atom).read("base", composite=False), atom.variables)),
        table=base.ident, guard=base.guard("base"),
        not_null=capture.all_not_null("base", atom.columns),
    ).as_string(conn)
    props = {**jdbc.props, "fetchsize": "10000"}
    first = atom.variables[0]
    if integer:
        low, high = conn.execute(sql.SQL("SELECT min({v}), max({v}) FROM {q}").format(
            v=sql.Identifier(first), q=sql.SQL(query))).fetchone()  # type: ignore[arg-type, misc]
        if low is not None:
            return spark.read.jdbc(jdbc.url, query, column=first, lowerBound=int(low), upperBound=int(high) + 1,
                                   numPartitions=READ_PARTITIONS, properties=props)
    return spark.read.jdbc(jdbc.url, query, properties=props)


def read_relations(spark: Any, conn: psycopg.Connection, view: ResolvedView, jdbc: JdbcTarget) -> dict[str, Any]:
    """Per relation k, a DataFrame (x, y) of its base table's rows (``read_atom``), one read per
    table and pair of columns (a self-join's relations share it)."""
    out: dict[str, Any] = {}
    cache: dict[tuple[Any, tuple[str, ...]], Any] = {}
    for atom in view.query.atoms:
        key = (view.qualified(atom.table), atom.columns)
        if key not in cache:
            cache[key] = read_atom(spark, conn, view, atom, jdbc).toDF("x", "y")
        out[atom.relation] = cache[key]
    return out


def aggregate(rows: Any) -> Any:
    """K with multiplicities: one row per distinct (x, y), mult = number of duplicate rows."""
    from pyspark.sql import functions as F

    return rows.groupBy("x", "y").agg(F.count(F.lit(1)).cast("bigint").alias("mult"))


def partition(rel: Any, theta: float, always_heavy: bool) -> tuple[Any, Any]:
    """(parts(x, y, mult, heavy), degree(x, degree, heavy)) at the strict threshold θ."""
    from pyspark.sql import functions as F

    degree = rel.groupBy("x").agg(F.count(F.lit(1)).cast("bigint").alias("degree"))
    heavy = F.lit(True) if always_heavy else (F.col("degree").cast("double") >= F.lit(float(theta)))
    degree = degree.withColumn("heavy", heavy)
    parts = rel.join(degree.select("x", "heavy"), "x")
    return parts, degree


def aux_view(k_heavy: Any, l_light: Any) -> Any:
    """V_KL(x, z) = Σ_y K_heavy(x, y) · L_light(y, z), zero sums dropped."""
    from pyspark.sql import functions as F

    kh = k_heavy.select("x", "y", F.col("mult").alias("m1"))
    ll = l_light.select(F.col("x").alias("y"), F.col("y").alias("z"), F.col("mult").alias("m2"))
    return (kh.join(ll, "y").groupBy("x", "z").agg(F.sum(F.col("m1") * F.col("m2")).alias("mult"))
              .filter(F.col("mult") != 0))


def _triangle(r: Any, s: Any, t: Any) -> int:
    """Σ R(a,b)·S(b,c)·T(c,a) over (x, y, mult) frames: R(x=a,y=b), S(x=b,y=c), T(x=c,y=a)."""
    from pyspark.sql import functions as F

    rr = r.select(F.col("x").alias("a"), F.col("y").alias("b"), F.col("mult").alias("mr"))
    ss = s.select(F.col("x").alias("b"), F.col("y").alias("c"), F.col("mult").alias("ms"))
    tt = t.select(F.col("x").alias("c"), F.col("y").alias("a"), F.col("mult").alias("mt"))
    row = rr.join(ss, "b").join(tt, ["c", "a"]).agg(F.sum(F.col("mr") * F.col("ms") * F.col("mt"))).first()
    return int(row[0] or 0)


def _aux_join(v: Any, m: Any) -> int:
    """Σ V_KL(x, z) · M(z, x)."""
    from pyspark.sql import functions as F

    mm = m.select(F.col("x").alias("z"), F.col("y").alias("x"), F.col("mult").alias("mm"))
    row = v.join(mm, ["x", "z"]).agg(F.sum(F.col("mult") * F.col("mm"))).first()
    return int(row[0] or 0)


def heavy_light_count(rels: dict[str, Any], parts: dict[str, Any], views: dict[str, Any]) -> int:
    """The count over the eight heavy/light combinations: V_RS⋈T + V_ST⋈R + V_TR⋈S + hhh + lll."""
    from pyspark.sql import functions as F

    heavy = {k: parts[k].filter(F.col("heavy")).drop("heavy") for k in RELATIONS}
    light = {k: parts[k].filter(~F.col("heavy")).drop("heavy") for k in RELATIONS}
    total = sum(_aux_join(views[k], rels[PREVIOUS[k]]) for k in RELATIONS)
    total += _triangle(heavy["r"], heavy["s"], heavy["t"])
    total += _triangle(light["r"], light["s"], light["t"])
    return total


@dataclass
class SparkState:
    db_size: int
    n: int
    theta: float
    count: int
    parts: dict[str, Any]
    degrees: dict[str, Any]
    views: dict[str, Any]
    relations: dict[str, Any]  # K with multiplicities (cached)

    def unpersist(self) -> None:
        """Free the cached frames (a long-lived session runs many builds)."""
        for frames in (self.relations, self.parts, self.views):
            for df in frames.values():
                df.unpersist()


def compute_state(rows: dict[str, Any], epsilon: float, theta_of: Any) -> SparkState:
    """The IVMε state from the base rows; ``theta_of(n)`` gives N^ε (PostgreSQL's float8 power)."""
    rels = {k: aggregate(rows[k]).cache() for k in RELATIONS}
    db_size = sum(rels[k].count() for k in RELATIONS)
    n = 2 * db_size + 1
    theta = float(theta_of(n))
    parts, degrees = {}, {}
    for k in RELATIONS:
        parts[k], degrees[k] = partition(rels[k], theta, epsilon == 0)
        parts[k] = parts[k].cache()
    from pyspark.sql import functions as F

    views = {k: aux_view(parts[k].filter(F.col("heavy")), parts[NEXT[k]].filter(~F.col("heavy"))).cache()
             for k in RELATIONS}
    count = heavy_light_count(rels, parts, views)
    return SparkState(db_size, n, theta, count, parts, degrees, views, rels)


class ScratchSchemas:
    """The scratch schemas ``pgivm_stage_<hex>`` that Spark builds create during one ``create``.

    Each is created and committed on a side connection, so that Spark's own JDBC connections can
    write into it. ``drop_all`` removes them from a side connection; call it only when the caller's
    transaction is over (or rolled back to its savepoint), or it would wait for that transaction's
    locks on the schema.
    """

    def __init__(self, conninfo: str) -> None:
        self.conninfo = conninfo
        self.names: list[str] = []

    def create(self) -> str:
        name = f"pgivm_stage_{uuid.uuid4().hex[:12]}"
        with connect(self.conninfo, autocommit=True) as side:
            side.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
        self.names.append(name)
        return name

    def drop_all(self) -> None:
        """Drop every scratch schema (IF EXISTS: a committed build has dropped its own); never raises."""
        if not self.names:
            return
        try:
            with connect(self.conninfo, autocommit=True) as side:
                side.execute("SET lock_timeout = '30s'")
                for name in self.names:
                    side.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))
        except (psycopg.Error, PgivmError) as err:
            first = (str(err).strip().splitlines() or ["error"])[0]
            print(f"pgivm: warning: could not drop the scratch schema(s) {', '.join(self.names)}: {first}; "
                  f"drop them with DROP SCHEMA ... CASCADE", file=sys.stderr)


@contextmanager
def scratch_schemas(conn: psycopg.Connection) -> Iterator[ScratchSchemas]:
    """Around a transaction (or savepoint) of ``conn`` that may run Spark builds: if the block
    raises, i.e. after the transaction has rolled back, drop the scratch schemas they created.

    Use as ``with scratch_schemas(conn) as scratch, conn.transaction(): ...`` so that the
    transaction ends (and releases its locks) before the schemas are dropped.
    """
    from pgivm.spark.session import conninfo_of

    scratch = ScratchSchemas(conninfo_of(conn))
    try:
        yield scratch
    except BaseException:
        scratch.drop_all()
        raise


def build_with_spark(conn: psycopg.Connection, view: ResolvedView, name: str, epsilon: float,
                     scratch: ScratchSchemas, master: str = "local[*]") -> None:
    """Fill the (empty, just created) state tables of view ``name`` from a Spark computation.

    On success the scratch schema is dropped inside ``conn``'s transaction; on failure it is left
    to ``scratch`` (the caller drops it once its transaction has rolled back).
    """
    started = time.perf_counter()
    names = Names.of(name)
    spark, jdbc, stage = start_build(conn, scratch, master)
    rows = read_relations(spark, conn, view, jdbc)
    state = compute_state(rows, epsilon, theta_of(conn, epsilon))
    try:
        computed = time.perf_counter()
        for k in RELATIONS:
            jdbc.write(state.parts[k], f'"{stage}"."{k}_parts"')
            jdbc.write(state.degrees[k], f'"{stage}"."{k}_degree"')
            jdbc.write(state.views[k], f'"{stage}"."{AUX_VIEW[k]}"')
        written = time.perf_counter()
        with conn.transaction():  # a savepoint: on failure its locks on the staging tables go with it
            _copy_into_state(conn, view, names, stage)
            conn.execute(
                sql.SQL("UPDATE {} SET db_size = %s, n = %s, theta = power(%s::float8, epsilon), "
                        "major_rebalances = major_rebalances + 1").format(names("state")),
                [state.db_size, state.n, state.n])
            conn.execute(sql.SQL("UPDATE {} SET count = %s").format(names("result")), [state.count])
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(stage)))
    finally:
        state.unpersist()
    report_build(started, computed, written, state.db_size, state.n, state.theta, state.count)


def start_build(conn: psycopg.Connection, scratch: ScratchSchemas, master: str) -> tuple[Any, JdbcTarget, str]:
    """The Spark session, the JDBC target of ``conn``'s database, a new scratch schema."""
    from pgivm.spark.session import get_spark

    spark = get_spark(master)
    jdbc = JdbcTarget.of(conn)
    stage = scratch.create()
    print(f"spark preprocessing: scratch schema {stage}", file=sys.stderr)
    return spark, jdbc, stage


def theta_of(conn: psycopg.Connection, epsilon: float) -> Any:
    """N -> N^ε as PostgreSQL computes it (``power(n::float8, epsilon)``, as major_rebalance() does)."""
    def theta(n: int) -> float:
        return conn.execute("SELECT power(%s::float8, %s::float8)", [n, float(epsilon)]).fetchone()[0]  # type: ignore[index]
    return theta


def report_build(started: float, computed: float, written: float, db_size: int, n: int, theta: float, count: int) -> None:
    """Keep the build's timings in ``last_timings`` and say what was built, on stderr."""
    last_timings.clear()
    last_timings.update(compute=computed - started, write=written - computed,
                        copy=time.perf_counter() - written, total=time.perf_counter() - started)
    print(f"spark preprocessing: |D| = {db_size}, N = {n}, theta = {theta:.2f}, count = {count}; computed in "
          f"{computed - started:.1f} s, written in {written - computed:.1f} s, copied in {last_timings['copy']:.1f} s",
          file=sys.stderr)


def _copy_into_state(conn: psycopg.Connection, view: ResolvedView, names: Names, stage: str) -> None:
    types = view.variable_types
    for k in RELATIONS:
        x, y = VARIABLES[k]
        z = VARIABLES[NEXT[k]][1]
        tx, ty, tz = (sql.SQL(types[v]) for v in (x, y, z))  # type: ignore[arg-type]  # from format_type()
        parts = sql.Identifier(stage, f"{k}_parts")
        conn.execute(sql.SQL("TRUNCATE {}, {}, {}, {}").format(
            names(f"{k}_heavy"), names(f"{k}_light"), names(f"{k}_degree"), names(AUX_VIEW[k])))
        for part, flag in (("heavy", sql.SQL("")), ("light", sql.SQL("NOT "))):
            conn.execute(sql.SQL(
                "INSERT INTO {dst} ({x}, {y}, mult) SELECT x::{tx}, y::{ty}, mult FROM {src} WHERE {flag}heavy"
            ).format(dst=names(f"{k}_{part}"), x=sql.Identifier(x), y=sql.Identifier(y), tx=tx, ty=ty,
                     src=parts, flag=flag))
        conn.execute(sql.SQL(
            "INSERT INTO {dst} ({x}, degree, heavy) SELECT x::{tx}, degree, heavy FROM {src}"
        ).format(dst=names(f"{k}_degree"), x=sql.Identifier(x), tx=tx, src=sql.Identifier(stage, f"{k}_degree")))
        conn.execute(sql.SQL(
            "INSERT INTO {dst} ({x}, {z}, mult) SELECT x::{tx}, z::{tz}, mult FROM {src}"
        ).format(dst=names(AUX_VIEW[k]), x=sql.Identifier(x), z=sql.Identifier(z), tx=tx, tz=tz,
                 src=sql.Identifier(stage, AUX_VIEW[k])))
