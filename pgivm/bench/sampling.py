"""``pgivm bench sample``: reservoir sampling over joins against the ways one does it by hand.

Graph queries over one edge table g (line-3, line-4, star-4, and the cyclic triangle and dumbbell
sampled through a hypertree decomposition; each a self-join: an inserted edge is
a logical insert into every atom in turn), the edges of ``--edges`` streamed in one shuffled
order, one single-row INSERT per edge, every statement committed. In one run, on the same
stream:

- ``sample``: ``pgivm create --system sample --size K``;
- ``enumerate``: a row trigger that enumerates every new join result (one delta query per atom,
  over the table's indexes) and feeds each to Algorithm R: the symmetric-join reservoir one writes
  by hand. It stops at ``--budget`` seconds;
- ``none``: the same inserts with no view;
- ``recompute``: ``ORDER BY random() LIMIT K`` over the whole join at each checkpoint, stopped by
  a statement timeout of ``--recompute-budget`` seconds.

At ten checkpoints of the stream: cumulative time per system and the join size |Q| (counted
bottom-up from the sample's index, outside the timing). The fitted log-log slope of time against
|Q| says whether a system's work grows with the input or with the join.
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from pgivm import command
from pgivm.bench.scaling import fit_loglog
from pgivm.report import print_table

# name -> (atoms, join conditions over aliases g1..gm, select list)
QUERIES: dict[str, tuple[int, str, str]] = {
    "line-3": (3, "g1.dst = g2.src AND g2.dst = g3.src", "g1.src AS a, g2.src AS b, g3.src AS c, g3.dst AS d"),
    "line-4": (4, "g1.dst = g2.src AND g2.dst = g3.src AND g3.dst = g4.src",
               "g1.src AS a, g2.src AS b, g3.src AS c, g4.src AS d, g4.dst AS e"),
    "star-4": (4, "g1.src = g2.src AND g1.src = g3.src AND g1.src = g4.src",
               "g1.src AS hub, g1.dst AS x, g2.dst AS y, g3.dst AS z, g4.dst AS w"),
    # cyclic (through a hypertree decomposition): one bag, the whole join; two triangle bags and an edge
    "triangle": (3, "g1.dst = g2.src AND g2.dst = g3.src AND g3.dst = g1.src", "g1.src AS a, g2.src AS b, g3.src AS c"),
    "dumbbell": (7, "g1.dst = g2.src AND g2.dst = g3.src AND g3.dst = g1.src AND g4.src = g3.src AND g5.src = g4.dst "
                    "AND g5.dst = g6.src AND g6.dst = g7.src AND g7.dst = g5.src",
                 "g1.src AS a, g2.src AS b, g3.src AS c, g5.src AS d, g6.src AS e, g7.src AS f"),
}


@dataclass
class Config:
    edges: list[tuple[int, int]]
    source: str
    queries: tuple[str, ...] = ("line-3", "line-4", "star-4")
    prefix: int = 20_000  # edges streamed per query and system
    k: int = 10_000
    checkpoints: int = 10
    tail: int = 50  # edges at the stream's end the enumerating baseline is timed on, when it stopped early
    budget: float = 300.0  # seconds of the enumerating baseline per query
    recompute_budget: float = 60.0
    seed: int = 1
    out: Path | None = None
    targets: list[list[Any]] = field(default_factory=list)


def _sql(query: str) -> str:
    atoms, conditions, select = QUERIES[query]
    tables = ", ".join(f"g g{i + 1}" for i in range(atoms))
    return f"SELECT {select} FROM {tables} WHERE {conditions}"


def _reset(conn: psycopg.Connection) -> None:
    for view in command.list_views(target=conn):
        command.drop(view.name, target=conn)
    conn.execute("DROP TABLE IF EXISTS g, enum_state, enum_sample CASCADE")
    conn.execute("DROP FUNCTION IF EXISTS enum_insert() CASCADE")
    conn.execute("CREATE TABLE g (id bigserial PRIMARY KEY, src int NOT NULL, dst int NOT NULL); "
                 "CREATE INDEX ON g (src); CREATE INDEX ON g (dst)")


def _enumerating_trigger(conn: psycopg.Connection, query: str, k: int) -> None:
    """Algorithm R over every new result: for atom i, the results with the new edge at i, the
    earlier atoms over the table with it and the later ones without (each result once)."""
    atoms, conditions, _ = QUERIES[query]
    loops = []
    for i in range(1, atoms + 1):
        later = "".join(f" AND g{j}.id <> NEW.id" for j in range(i + 1, atoms + 1))
        ids = ", ".join(f"g{j}.id" for j in range(1, atoms + 1))
        tables = ", ".join(f"g g{j}" for j in range(1, atoms + 1))
        loops.append(f"""
    FOR r IN SELECT ARRAY[{ids}] AS ids FROM {tables} WHERE {conditions} AND g{i}.id = NEW.id{later} LOOP
        n := n + 1;
        IF n <= {k} THEN
            INSERT INTO enum_sample VALUES (n - 1, r.ids);
        ELSE
            j := floor(random() * n);
            IF j < {k} THEN
                UPDATE enum_sample SET ids = r.ids WHERE slot = j;
            END IF;
        END IF;
    END LOOP;""")
    conn.execute(f"""
        CREATE TABLE enum_state (seen bigint NOT NULL); INSERT INTO enum_state VALUES (0);
        CREATE TABLE enum_sample (slot bigint PRIMARY KEY, ids bigint[] NOT NULL);
        CREATE FUNCTION enum_insert() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE r record; n bigint; j bigint;
        BEGIN
            SELECT seen INTO n FROM enum_state FOR UPDATE;{''.join(loops)}
            UPDATE enum_state SET seen = n;
            RETURN NULL;
        END $$;
        CREATE TRIGGER enum_insert AFTER INSERT ON g FOR EACH ROW EXECUTE FUNCTION enum_insert();""")


@dataclass
class Run:
    system: str
    times: list[float]  # cumulative seconds at each checkpoint reached
    latencies: list[float]
    finished: bool


def _stream(conn: psycopg.Connection, edges: list[tuple[int, int]], marks: list[int], budget: float | None) -> Run:
    times: list[float] = []
    latencies: list[float] = []
    elapsed = 0.0
    done = 0
    for mark in marks:
        for a, b in edges[done:mark]:
            started = time.perf_counter()
            conn.execute("INSERT INTO g (src, dst) VALUES (%s, %s)", (a, b))
            spent = time.perf_counter() - started
            latencies.append(spent)
            elapsed += spent
            if budget is not None and elapsed > budget:
                return Run("", times, latencies, False)
        done = mark
        times.append(elapsed)
    return Run("", times, latencies, True)


def graph_query(conn: psycopg.Connection, config: Config, query: str) -> None:
    # Both directions of every undirected edge (the paper's Epinions graph is directed; one
    # direction of an undirected list would leave paths only up the node order).
    edges = sorted(set(config.edges) | {(b, a) for a, b in config.edges})
    random.Random(config.seed).shuffle(edges)
    edges = edges[: config.prefix]
    marks = [len(edges) * (i + 1) // config.checkpoints for i in range(config.checkpoints)]
    atoms = QUERIES[query][0]
    runs: dict[str, Run] = {}
    sizes: list[int] = []
    recompute: list[str] = []

    _reset(conn)
    command.create("s", _sql(query), system="sample", size=config.k, seed=config.seed, target=conn)
    # the sample's own run, with |Q| at every checkpoint counted outside the timing
    times: list[float] = []
    latencies: list[float] = []
    elapsed, done = 0.0, 0
    for mark in marks:
        run = _stream(conn, edges[done:mark], [mark - done], None)
        elapsed += run.times[-1]
        latencies += run.latencies
        times.append(elapsed)
        done = mark
        sizes.append(int(command.status("s", target=conn).figures["join_size"]))
        if recompute and recompute[-1].startswith(">"):  # once it times out, it would at every later checkpoint
            recompute.append(recompute[-1])
            continue
        conn.execute(f"SET statement_timeout = {int(config.recompute_budget * 1000)}")
        try:
            started = time.perf_counter()
            conn.execute(f"SELECT count(*) FROM ({_sql(query)} ORDER BY random() LIMIT {config.k}) q")
            recompute.append(f"{time.perf_counter() - started:.2f}")
        except psycopg.errors.QueryCanceled:
            recompute.append(f"> {config.recompute_budget:.0f}")
        finally:
            conn.execute("SET statement_timeout = 0")
    figures = command.status("s", target=conn).figures
    runs["sample"] = Run("sample", times, latencies, True)
    verified = command.verify("s", target=conn).ok if sizes[-1] <= 50_000_000 else None

    _reset(conn)
    _enumerating_trigger(conn, query, config.k)
    runs["enumerate"] = _stream(conn, edges, marks, config.budget)
    enumerated = int(conn.execute("SELECT seen FROM enum_state").fetchone()[0])  # type: ignore[index]

    _reset(conn)
    runs["none"] = _stream(conn, edges, marks, None)
    if not runs["enumerate"].finished:
        runs["enumerate at the end"] = _at_the_end(conn, query, edges, sizes[-1], config)

    print(f"\n== {query}: {len(edges):,} edges of {config.source}, k = {config.k:,} ==")
    rows = []
    for i, mark in enumerate(marks):
        row: list[Any] = [f"{mark:,}", f"{sizes[i]:,}"]
        for system in ("sample", "enumerate", "none"):
            t = runs[system].times
            row.append(f"{t[i]:.1f}" if i < len(t) else "stopped")
        row.append(recompute[i])
        rows.append(row)
    print_table(["edges", "|Q|", "sample s", "enumerate s", "no view s", "recompute once s"], rows)
    per_edge = statistics.median(runs["sample"].latencies) * 1e3
    p99 = sorted(runs["sample"].latencies)[int(0.99 * len(runs["sample"].latencies))] * 1e3
    print(f"sample: median {per_edge:.2f} ms per edge ({per_edge / atoms:.2f} ms per logical insert into one atom), "
          f"p99 {p99:.1f} ms; no view: median {statistics.median(runs['none'].latencies) * 1e3:.2f} ms; "
          f"{figures['replacements']:,} replacements, {figures['positions_retrieved']:,} positions retrieved "
          f"for {sizes[-1]:,} results; verify: {'ok' if verified else 'skipped' if verified is None else 'FAILED'}")
    if runs["enumerate"].finished:
        agree = "agrees" if enumerated == sizes[-1] else "DISAGREES"
        print(f"enumerate: {enumerated:,} results fed to Algorithm R, {agree} with |Q| = {sizes[-1]:,}")
    slope_sample = fit_loglog(sizes, runs["sample"].times)
    slope_enum = fit_loglog(sizes[: len(runs["enumerate"].times)], runs["enumerate"].times)
    common = len(runs["enumerate"].times)
    speedup = (runs["enumerate"].times[-1] / runs["sample"].times[common - 1]) if common else None
    finished = runs["enumerate"].finished
    nan = float("nan")
    print(f"time against |Q|, fitted log-log slope: sample {slope_sample.slope if slope_sample else nan:.2f}, "
          f"enumerate {slope_enum.slope if slope_enum else nan:.2f}")
    if speedup:
        print(f"enumerate / sample at the last checkpoint both reached ({marks[common - 1]:,} edges): {speedup:.1f}×")
    if not finished:
        print(f"enumerate stopped at its budget of {config.budget:.0f} s after {len(runs['enumerate'].latencies):,} edges; "
              f"sample streamed all {len(edges):,} in {runs['sample'].times[-1]:.1f} s")
    for line in _where_each_stands(runs, marks, sizes):
        print(line)
    end_to_end = (f"{runs['enumerate'].times[-1] / runs['sample'].times[-1]:.1f}×" if finished
                  else f"≥ {config.budget / runs['sample'].times[-1]:.1f}× (enumerate stopped at {config.budget:.0f} s)")
    if query == "line-3":
        config.targets.append(["line-3: slope of time against |Q| ≤ 0.2 (enumerate ≈ 1)",
                               f"sample {slope_sample.slope:.2f}, enumerate {slope_enum.slope:.2f}" if slope_sample and slope_enum else "n/a"])
        config.targets.append(["line-3: median per insert ≤ 1 ms",
                               f"{per_edge / atoms:.2f} ms per logical insert, {per_edge:.2f} ms per edge (3 atoms)"])
    config.targets.append([f"{query}: end to end against enumerate", end_to_end])
    _plot(config, query, sizes, runs)


def _at_the_end(conn: psycopg.Connection, query: str, edges: list[tuple[int, int]], size: int, config: Config) -> Run:
    """The enumerating baseline where the stream ends, which its own run never reaches: every edge
    but the last ``config.tail`` loaded without it, then those streamed through it (Algorithm R's
    count set to the join's size there, so that it replaces as it would), for at most the budget."""
    _reset(conn)
    with conn.cursor().copy("COPY g (src, dst) FROM STDIN") as copy:
        for edge in edges[: -config.tail]:
            copy.write_row(edge)
    conn.execute("ANALYZE g")
    _enumerating_trigger(conn, query, config.k)
    conn.execute("UPDATE enum_state SET seen = %s", [size])
    return _stream(conn, edges[-config.tail:], [config.tail], config.budget)


def _where_each_stands(runs: dict[str, Run], marks: list[int], sizes: list[int], tail: int = 1000) -> list[str]:
    """The crossover (the first checkpoint where enumerating has spent more time than sampling)
    and the per-edge throughput of each at the end: sample's over its last ``tail`` edges, the
    enumerating baseline's over its last ``tail`` before it stopped, if it did. An enumerating
    edge costs more as |Q| grows, so at the end of the stream its rate is at most that one's,
    and the ratio printed is a lower bound."""
    sample, enum = runs["sample"], runs["enumerate"]
    crossover = next((i for i, t in enumerate(enum.times) if t > sample.times[i]), None)
    if crossover is None and not enum.finished and len(enum.times) < len(marks):
        crossover = len(enum.times)  # it stopped (over its budget) before the next checkpoint sample reached
    out = [f"crossover: enumerate has spent more than sample from {marks[crossover]:,} edges on (|Q| = {sizes[crossover]:,})"
           if crossover is not None else "crossover: none (enumerate spent less than sample at every checkpoint)"]
    rate = {name: len(run.latencies[-tail:]) / sum(run.latencies[-tail:]) for name, run in runs.items() if run.latencies}
    if "sample" in rate and "enumerate" in rate:
        bound = "" if enum.finished else f" (enumerate measured where it stopped, {len(enum.latencies):,} edges: a lower bound)"
        out.append(f"throughput at the end, over the last {tail:,} edges: sample {rate['sample']:,.0f} edges/s, "
                   f"enumerate {rate['enumerate']:,.1f} edges/s: {rate['sample'] / rate['enumerate']:,.1f}×{bound}")
    end = runs.get("enumerate at the end")
    if "sample" in rate and end is not None and end.latencies:
        edges_per_s = len(end.latencies) / sum(end.latencies)
        out.append(f"enumerate over the stream's last edges, everything before them loaded: {len(end.latencies):,} edges"
                   f"{'' if end.finished else ' (its budget ran out)'}, {edges_per_s:,.3f} edges/s: sample's rate at the end "
                   f"is {rate['sample'] / edges_per_s:,.0f}× that")
    return out


def _plot(config: Config, query: str, sizes: list[int], runs: dict[str, Run]) -> None:
    if config.out is None:
        return
    from pgivm.bench.plots import _pyplot

    plt = _pyplot()
    if plt is None:
        return
    config.out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for system, run in runs.items():
        if system == "enumerate at the end":  # timed on the stream's last edges alone: no checkpoints
            continue
        ax.loglog(sizes[: len(run.times)], run.times, marker="o", label=system)
    ax.set_xlabel("join size |Q| at the checkpoint")
    ax.set_ylabel("cumulative seconds")
    ax.set_title(f"{query}: time against join size")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    path = config.out / f"sample-{query}.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"plot: {path}")


def main(conn: psycopg.Connection, config: Config) -> None:
    print(f"pgivm bench sample: {', '.join(config.queries)} over the first {config.prefix:,} directed edges (both "
          f"directions of each) of "
          f"{config.source} (shuffled, seed {config.seed}), k = {config.k:,}; enumerate stops at {config.budget:.0f} s, "
          f"recompute at {config.recompute_budget:.0f} s")
    for query in config.queries:
        graph_query(conn, config, query)
    print("\ntargets (issue 12):")
    print_table(["target", "measured"], config.targets)


# --- TPC-DS: the paper's QX, QY, QZ (Zhao et al. 2020), foreign-key merging and grouping on and off ---

# name -> (atoms as (alias, table), join conditions, select list, tables preloaded before the view)
TPCDS_QUERIES: dict[str, tuple[tuple[tuple[str, str], ...], str, str, tuple[str, ...]]] = {
    "QX": ((("ss", "store_sales"), ("sr", "store_returns"), ("cs", "catalog_sales"), ("d1", "date_dim"),
            ("d2", "date_dim")),
           "ss.ss_item_sk = sr.sr_item_sk AND ss.ss_ticket_number = sr.sr_ticket_number "
           "AND sr.sr_customer_sk = cs.cs_bill_customer_sk AND d1.d_date_sk = ss.ss_sold_date_sk "
           "AND d2.d_date_sk = cs.cs_sold_date_sk",
           "ss.ss_item_sk, ss.ss_ticket_number, cs.cs_order_number, cs.cs_item_sk, d1.d_year AS sold, d2.d_year AS bought",
           ("date_dim",)),
    "QY": ((("ss", "store_sales"), ("c1", "customer"), ("d1", "household_demographics"), ("c2", "customer"),
            ("d2", "household_demographics")),
           "ss.ss_customer_sk = c1.c_customer_sk AND c1.c_current_hdemo_sk = d1.hd_demo_sk "
           "AND d1.hd_income_band_sk = d2.hd_income_band_sk AND d2.hd_demo_sk = c2.c_current_hdemo_sk",
           "ss.ss_item_sk, ss.ss_ticket_number, c1.c_customer_sk AS buyer, c2.c_customer_sk AS peer",
           ("household_demographics",)),
    "QZ": ((("ss", "store_sales"), ("c1", "customer"), ("d1", "household_demographics"), ("c2", "customer"),
            ("d2", "household_demographics"), ("i1", "item"), ("i2", "item")),
           "ss.ss_customer_sk = c1.c_customer_sk AND c1.c_current_hdemo_sk = d1.hd_demo_sk "
           "AND d1.hd_income_band_sk = d2.hd_income_band_sk AND d2.hd_demo_sk = c2.c_current_hdemo_sk "
           "AND ss.ss_item_sk = i1.i_item_sk AND i1.i_category_id = i2.i_category_id",
           "ss.ss_item_sk, ss.ss_ticket_number, c1.c_customer_sk AS buyer, c2.c_customer_sk AS peer, "
           "i2.i_item_sk AS similar",
           ("household_demographics",)),
}
# What each setting turns on: (create's merge, grouping); the paper's Figure 9 rows.
SETTINGS = (("plain index", "none", "off"), ("foreign keys", "auto", "off"), ("foreign keys + grouping", "auto", "on"))


@dataclass
class TpcdsConfig:
    queries: tuple[str, ...] = ("QX", "QY", "QZ")
    scale: float = 0.1
    facts: int = 20_000  # store_sales rows streamed (QX: their returns, and half as many catalog_sales)
    k: int = 100_000
    budget: float = 300.0  # seconds per setting and baseline
    recompute_budget: float = 60.0
    seed: int = 1
    dimension_rows: int | None = None  # the streamed dimensions (customer, item) cut to their first rows (tests)


def tpcds_sql(name: str) -> str:
    atoms, conditions, select, _ = TPCDS_QUERIES[name]
    return f"SELECT {select} FROM {', '.join(f'{t} {a}' for a, t in atoms)} WHERE {conditions}"


def _tpcds_stream(data: Any, name: str, config: TpcdsConfig) -> list[tuple[str, tuple[Any, ...]]]:
    """The streamed rows of a query, interleaved in one seeded order: fact rows may come before
    the dimension rows they reference (the asymmetric case of the foreign-key merge)."""
    atoms, _, _, preload = TPCDS_QUERIES[name]
    tables = sorted({t for _, t in atoms} - set(preload))
    sales = data.rows["store_sales"][: config.facts]
    chosen: dict[str, list[tuple[Any, ...]]] = {"store_sales": sales}
    tickets = {(r[0], r[1]) for r in sales}
    chosen["store_returns"] = [r for r in data.rows["store_returns"] if (r[0], r[1]) in tickets]
    chosen["catalog_sales"] = data.rows["catalog_sales"][: config.facts // 2]
    cut = slice(config.dimension_rows)  # None: every row
    stream = [(t, row) for t in tables for row in (chosen.get(t) or data.rows[t][cut])]
    random.Random(config.seed).shuffle(stream)
    return stream


def _preloaded(data: Any, table: str, config: TpcdsConfig) -> list[tuple[Any, ...]]:
    """A preloaded dimension: date_dim restricted to the dates the streamed facts reference (all
    73,049 days would only time the build of the plain index), household_demographics whole."""
    if table != "date_dim":
        return data.rows[table]
    sales = data.rows["store_sales"][: config.facts]
    dates = {r[3] for r in sales} | {r[3] for r in data.rows["catalog_sales"][: config.facts // 2]}
    return [r for r in data.rows["date_dim"] if r[0] in dates]


def _tpcds_reset(conn: psycopg.Connection, name: str, data: Any, config: TpcdsConfig) -> None:
    from pgivm.data import tpcds

    for view in command.list_views(target=conn):
        command.drop(view.name, target=conn)
    conn.execute("DROP TABLE IF EXISTS enum_state, enum_sample CASCADE")
    atoms, _, _, preload = TPCDS_QUERIES[name]
    tables = sorted({t for _, t in atoms})
    for t in tables:
        conn.execute(f"DROP FUNCTION IF EXISTS enum_{t}() CASCADE")
    tpcds.create_tables(conn, tables)
    for t in preload:
        tpcds.load(conn, t, _preloaded(data, t, config))
    conn.execute(f"ANALYZE {', '.join(tables)}")


def _tpcds_enumerating_triggers(conn: psycopg.Connection, name: str, k: int) -> None:
    """Algorithm R over every new result, by hand: for each table a row trigger that runs one
    delta query per atom of that table (earlier atoms of the same table see the new row, later
    ones do not: each result once)."""
    atoms, conditions, _, _ = TPCDS_QUERIES[name]
    conn.execute("CREATE TABLE enum_state (seen bigint NOT NULL); INSERT INTO enum_state VALUES (0); "
                 "CREATE TABLE enum_sample (slot bigint PRIMARY KEY, ids bigint[] NOT NULL)")
    ids = ", ".join(f"{a}.id" for a, _ in atoms)
    tables = ", ".join(f"{t} {a}" for a, t in atoms)
    for table in sorted({t for _, t in atoms}):
        mine = [a for a, t in atoms if t == table]
        loops = []
        for i, alias in enumerate(mine):
            later = "".join(f" AND {b}.id <> NEW.id" for b in mine[i + 1:])
            loops.append(f"""
    FOR r IN SELECT ARRAY[{ids}] AS ids FROM {tables} WHERE {conditions} AND {alias}.id = NEW.id{later} LOOP
        n := n + 1;
        IF n <= {k} THEN
            INSERT INTO enum_sample VALUES (n - 1, r.ids);
        ELSE
            j := floor(random() * n);
            IF j < {k} THEN
                UPDATE enum_sample SET ids = r.ids WHERE slot = j;
            END IF;
        END IF;
    END LOOP;""")
        conn.execute(f"""
        CREATE FUNCTION enum_{table}() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE r record; n bigint; j bigint;
        BEGIN
            SELECT seen INTO n FROM enum_state FOR UPDATE;{''.join(loops)}
            UPDATE enum_state SET seen = n;
            RETURN NULL;
        END $$;
        CREATE TRIGGER enum_{table} AFTER INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION enum_{table}();""")


def _tpcds_run(conn: psycopg.Connection, stream: list[tuple[str, tuple[Any, ...]]], budget: float) -> tuple[int, float]:
    """Single-row INSERTs, each committed, until the stream ends or ``budget`` seconds pass."""
    from pgivm.data.tpcds import TABLES

    statements = {t: sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
        sql.Identifier(t), sql.SQL(", ").join(map(sql.Identifier, TABLES[t][0])),
        sql.SQL(", ").join(sql.Placeholder() * len(TABLES[t][0]))) for t in TABLES}
    elapsed = 0.0
    for done, (table, row) in enumerate(stream):
        started = time.perf_counter()
        conn.execute(statements[table], row)
        elapsed += time.perf_counter() - started
        if elapsed > budget:
            return done + 1, elapsed
    return len(stream), elapsed


def tpcds_query(conn: psycopg.Connection, config: TpcdsConfig, name: str, data: Any, targets: list[list[Any]]) -> None:
    stream = _tpcds_stream(data, name, config)
    query = tpcds_sql(name)
    rows = []
    completed: dict[str, tuple[int, float]] = {}
    join_size = None
    for label, merge, grouping in SETTINGS:
        _tpcds_reset(conn, name, data, config)
        started = time.perf_counter()
        command.create("q", query, system="sample", size=config.k, seed=config.seed, merge=merge, grouping=grouping,
                       target=conn)
        build = time.perf_counter() - started
        done, elapsed = _tpcds_run(conn, stream, config.budget)
        completed[label] = (done, elapsed)
        figures = command.status("q", target=conn).figures
        verified = ""
        if done == len(stream):
            join_size = figures["join_size"]
            if join_size <= 20_000_000:  # verify recounts the join
                verified = "ok" if command.verify("q", target=conn).ok else "FAILED"
        rows.append([label, figures["merged"], figures["grouped_nodes"], f"{build:.1f}", f"{done:,}", f"{elapsed:.1f}",
                     f"{done / elapsed:,.0f}", f"{figures['moves']:,}", f"{figures['positions_retrieved']:,}",
                     f"{figures['join_size']:,}", verified])
    _tpcds_reset(conn, name, data, config)
    _tpcds_enumerating_triggers(conn, name, config.k)
    done, elapsed = _tpcds_run(conn, stream, config.budget)
    seen = int(conn.execute("SELECT seen FROM enum_state").fetchone()[0])  # type: ignore[index]
    completed["enumerate"] = (done, elapsed)
    agrees = "" if done < len(stream) or join_size is None else "agrees" if seen == join_size else "DISAGREES"
    rows.append(["enumerate (row trigger, Algorithm R)", "", "", "", f"{done:,}", f"{elapsed:.1f}", f"{done / elapsed:,.0f}",
                 "", f"{seen:,} (every result)", f"{seen:,}", agrees])
    conn.execute("SET statement_timeout = %s" % int(config.recompute_budget * 1000))
    try:
        started = time.perf_counter()
        conn.execute(f"SELECT count(*) FROM ({query} ORDER BY random() LIMIT {config.k}) q")
        recompute = f"{time.perf_counter() - started:.1f} s"
    except psycopg.errors.QueryCanceled:
        recompute = f"> {config.recompute_budget:.0f} s"
    finally:
        conn.execute("SET statement_timeout = 0")
    _tpcds_reset(conn, name, data, config)
    done, elapsed = _tpcds_run(conn, stream, config.budget)
    completed["no view"] = (done, elapsed)
    rows.append(["no view", "", "", "", f"{done:,}", f"{elapsed:.1f}", f"{done / elapsed:,.0f}", "", "", "", ""])
    print(f"\n== {name} over TPC-DS SF {config.scale}: {len(stream):,} rows streamed (one INSERT each), "
          f"{', '.join(TPCDS_QUERIES[name][3])} preloaded, k = {config.k:,}, {config.budget:.0f} s per run ==")
    print_table(["setting", "merged", "grouped nodes", "build s", "rows done", "seconds", "rows/s",
                 "index moves", "positions retrieved", "|Q| when stopped", "verify / |Q|"], rows)
    print(f"recompute ORDER BY random() LIMIT {config.k:,} once over the whole stream: {recompute}"
          + (f"; |Q| = {join_size:,}" if join_size is not None else ""))
    rate = {label: done / elapsed for label, (done, elapsed) in completed.items()}
    targets.append([f"{name}: rows/s, foreign keys + grouping against the plain index",
                    f"{rate['foreign keys + grouping'] / rate['plain index']:.1f}× (foreign keys alone "
                    f"{rate['foreign keys'] / rate['plain index']:.1f}×; enumerating {rate['enumerate'] / rate['foreign keys + grouping']:.2f}× "
                    f"and no view {rate['no view'] / rate['foreign keys + grouping']:.1f}× the sample's rate)"])


def tpcds_main(conn: psycopg.Connection, config: TpcdsConfig) -> None:
    from pgivm.data import tpcds

    started = time.perf_counter()
    data = tpcds.generate(config.scale)
    print(f"pgivm bench sample (TPC-DS): generated SF {config.scale} with DuckDB's dsdgen in "
          f"{time.perf_counter() - started:.1f} s; {config.facts:,} store_sales rows streamed per query")
    targets: list[list[Any]] = []
    for name in config.queries:
        tpcds_query(conn, config, name, data, targets)
    print("\ntargets (issue 12, TPC-DS):")
    print_table(["target", "measured"], targets)
