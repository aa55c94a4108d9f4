"""Spark integration (optional, ``pip install 'pgivm[spark]'``): ``load`` files over JDBC,
``create --preprocess spark`` (the IVMε state computed in Spark), ``validate --spark``.

pyspark is imported lazily: importing this package needs no Spark.
"""
