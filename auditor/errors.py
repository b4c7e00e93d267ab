"""The two kinds of mistake a user can make, each reported as one line and exit code 2."""
from __future__ import annotations


class AuditorError(Exception):
    """Base class: a problem with the user's input, not with the tool. Exit code 2."""


class ConfigError(AuditorError):
    """The configuration (audit.yaml, CLI flags, a suite, a threshold) is invalid."""


class InputError(AuditorError):
    """A data file cannot be used: missing, unreadable, empty, or lacking a declared column."""


class NotApplicable(Exception):
    """Raised by a check's ``run`` when it cannot apply to this data; the message is the reason.

    The runner marks the check ``skipped`` with that reason (e.g. "no time column declared").
    """
