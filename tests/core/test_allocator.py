"""auditor.core.allocator: glibc accepts the settings; AUDITOR_MALLOC=system opts out."""
from __future__ import annotations

import ctypes.util
import sys

import numpy as np
import pytest

from auditor.core.allocator import tune_for_batch


@pytest.mark.skipif(not sys.platform.startswith("linux") or not ctypes.util.find_library("c"),
                    reason="glibc only")
def test_glibc_takes_the_batch_settings_and_arrays_still_work():
    assert tune_for_batch() is True
    a = np.arange(5_000_000, dtype=np.float64)  # 40 MB: served from the heap now
    del a
    b = np.ones(5_000_000)
    assert b.sum() == 5_000_000


def test_auditor_malloc_system_leaves_the_allocator_alone(monkeypatch):
    monkeypatch.setenv("AUDITOR_MALLOC", "system")
    assert tune_for_batch() is False
