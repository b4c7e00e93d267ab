"""Airflow: audit each day's snapshot before the training task runs.

The audit is a ``BashOperator`` running ``auditor run``: a non-zero exit code fails the task,
so ``train`` (downstream) does not run on leaky or broken splits. Exit codes: 1 a finding at or
above ``--fail-on``; 2 unusable input or config; 3 a check crashed. The reports of every run
stay under ``reports/<ds>/`` and every run is appended to the ledger, so ``auditor history``
shows trends and ``--baseline last`` marks what is new since yesterday.

Copy into your dags folder; set AUDIT_DIR to the folder holding audit.yaml (whose dataset
paths may use the day's snapshot folder). Needs apache-airflow >= 2.4 (``cwd`` and
``schedule`` arguments).
"""
from __future__ import annotations

from datetime import datetime

from airflow import DAG
from airflow.operators.bash import BashOperator

AUDIT_DIR = "/opt/airflow/audit"  # holds audit.yaml; reports and the ledger are kept here

# Rendered by Airflow's Jinja ({{ ds }}: the run's logical date) and run in AUDIT_DIR.
AUDIT_COMMAND = (
    "auditor run audit.yaml --out reports/{{ ds }} --ledger reports/ledger.sqlite "
    "--baseline last --junit reports/{{ ds }}/junit.xml "
    "--summary-md reports/{{ ds }}/summary.md --quiet"
)

with DAG(
    dag_id="dataset_audit",
    start_date=datetime(2026, 1, 1),
    schedule="@daily",
    catchup=False,
    tags=["data-quality"],
) as dag:
    audit = BashOperator(
        task_id="audit_splits",
        bash_command=AUDIT_COMMAND,
        cwd=AUDIT_DIR,
        retries=0,  # an audit failure is a verdict, not a transient error
    )
    train = BashOperator(
        task_id="train",
        bash_command="echo 'your training job here'",
    )
    audit >> train
