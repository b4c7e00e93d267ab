"""One module per check family; one frozen dataclass per check (see
``auditor/core/registry.py``)."""
