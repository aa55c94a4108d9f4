"""The SparkSession for pgivm: local master, the PostgreSQL JDBC driver, and JDBC URLs from DSNs.

The driver jar is ``$PGIVM_JDBC_JAR`` when set (a path to a postgresql-*.jar), else the Maven
coordinate ``org.postgresql:postgresql`` resolved by Spark from the local Maven/ivy repository
(or the network when there is one). Missing Java or a missing driver is a one-line PgivmError.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from psycopg.conninfo import conninfo_to_dict

from pgivm.errors import PgivmError

JDBC_PACKAGE = "org.postgresql:postgresql:42.7.13"
JDBC_DRIVER = "org.postgresql.Driver"

_session: Any = None


def jdbc_url_from_dsn(dsn: str) -> tuple[str, dict[str, str]]:
    """A JDBC URL and connection properties (user, password, driver) for a libpq DSN or URL.

    JDBC speaks TCP only: a Unix-socket host (a path) or no host becomes 127.0.0.1, same port.
    """
    params = conninfo_to_dict(dsn)
    host = params.get("host") or os.environ.get("PGHOST") or ""
    if not host or host.startswith("/") or host.startswith("@"):
        host = params.get("hostaddr") or "127.0.0.1"
    host = host.split(",")[0]
    port = str(params.get("port") or os.environ.get("PGPORT") or 5432).split(",")[0]
    dbname = params.get("dbname") or os.environ.get("PGDATABASE") or params.get("user") or "postgres"
    user = params.get("user") or os.environ.get("PGUSER") or "postgres"
    props = {"user": user, "driver": JDBC_DRIVER}
    password = params.get("password") or os.environ.get("PGPASSWORD")
    if password:
        props["password"] = password
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"jdbc:postgresql://{host}:{port}/{dbname}", props


def _check_java() -> None:
    home = os.environ.get("JAVA_HOME")
    if home:
        if not os.path.exists(os.path.join(home, "bin", "java")):
            raise PgivmError(f"JAVA_HOME={home} has no bin/java",
                             "install Java 17 (e.g. apt-get install openjdk-17-jre-headless) and set JAVA_HOME to it")
    elif shutil.which("java") is None:
        raise PgivmError("Spark needs Java, and no java is on PATH and JAVA_HOME is not set",
                         "install Java 17 (e.g. apt-get install openjdk-17-jre-headless) and set JAVA_HOME")


def _jar_config() -> dict[str, str]:
    jar = os.environ.get("PGIVM_JDBC_JAR")
    if jar:
        if not os.path.isfile(jar):
            raise PgivmError(f"PGIVM_JDBC_JAR={jar} is not a file", "point it to a PostgreSQL JDBC driver jar (postgresql-42.x.jar)")
        return {"spark.jars": jar, "spark.driver.extraClassPath": jar, "spark.executor.extraClassPath": jar}
    return {"spark.jars.packages": JDBC_PACKAGE, "spark.jars.excludes": "org.checkerframework:checker-qual"}


def get_spark(master: str = "local[*]") -> Any:
    """The process-wide SparkSession (created once; a later master is ignored)."""
    global _session
    if _session is not None and _session._jsc is not None and not _session._jsc.sc().isStopped():
        return _session
    _check_java()
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise PgivmError("pyspark is not installed", "pip install 'pgivm[spark]'") from None
    builder = SparkSession.builder.master(master).appName("pgivm")
    conf = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "8",
        "spark.driver.memory": os.environ.get("PGIVM_SPARK_DRIVER_MEMORY", "2g"),
        "spark.sql.session.timeZone": "UTC",
        **_jar_config(),
    }
    for key, value in conf.items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as err:  # JVM launch or dependency resolution
        first = (str(err).strip().splitlines() or ["error"])[0]
        raise PgivmError(f"cannot start Spark: {first}",
                         "check Java (JAVA_HOME) and the JDBC driver: set PGIVM_JDBC_JAR to a postgresql-42.x.jar") from None
    spark.sparkContext.setLogLevel("ERROR")
    try:
        jvm = spark.sparkContext._jvm  # type: ignore[union-attr]
        jvm.java.lang.Thread.currentThread().getContextClassLoader().loadClass(JDBC_DRIVER)
    except Exception:
        spark.stop()
        raise PgivmError("the PostgreSQL JDBC driver is not on Spark's classpath",
                         f"set PGIVM_JDBC_JAR to a postgresql-42.x.jar, or make {JDBC_PACKAGE} resolvable") from None
    _session = spark
    return spark


def stop_spark() -> None:
    global _session
    if _session is not None:
        _session.stop()
        _session = None


def conninfo_of(conn: Any) -> str:
    """A libpq conninfo reaching the same database as ``conn``, password included (for side connections)."""
    from psycopg.conninfo import make_conninfo

    password = conn.info.password
    return make_conninfo(conn.info.dsn, password=password) if password else conn.info.dsn
