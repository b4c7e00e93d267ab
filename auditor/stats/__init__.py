"""Engine-free statistics: functions of arrays or aggregates (PSI, KS, AUC, exact tests,
MinHash)."""
