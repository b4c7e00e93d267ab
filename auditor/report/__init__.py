"""Results (Finding, CheckResult, Report) and every output: HTML, JSON, JUnit, Markdown, history."""
