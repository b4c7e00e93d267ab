"""The run itself: audit.yaml models, suites, the check registry and protocol, the runner."""
