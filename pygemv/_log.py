"""libgemv's log, routed to Python's :mod:`logging` (logger ``"pygemv"``).

libgemv decides what is worth saying (its level: ``$GEMV_LOG_LEVEL`` or
:func:`set_log_level`); every message it emits becomes a record of the ``pygemv`` logger:
error and warning as such, info as ``INFO``, trace as ``DEBUG``. With no logging
configured, Python prints warnings and errors to stderr, so by default a refused tuned
table is reported once and nothing else is. To see every call's dispatch::

    import logging; logging.basicConfig(level=logging.DEBUG)
    pygemv.set_log_level("trace")
"""
from __future__ import annotations

import logging

from . import _lib

logger = logging.getLogger("pygemv")
_PY_LEVELS = {1: logging.ERROR, 2: logging.WARNING, 3: logging.INFO, 4: logging.DEBUG}


def _emit(level: int, message: bytes, _user_data) -> None:
    # Called from C: an exception here could not propagate, so none may escape.
    try:
        logger.log(_PY_LEVELS.get(level, logging.WARNING), "libgemv: %s", message.decode(errors="replace"))
    except Exception:  # noqa: BLE001
        pass


_callback = _lib.LOGGER(_emit)  # kept alive for the library's lifetime


def route(lib) -> None:
    """Send the library's messages to :data:`logger` (called once, when it is loaded)."""
    lib.gemv_set_logger(_callback, None)


def set_log_level(level: str | int) -> None:
    """How much libgemv reports: ``"off"``, ``"error"``, ``"warning"`` (the default:
    problems such as a refused tuned table, once each), ``"info"`` (also the table in use
    and rejected calls) or ``"trace"`` (also every call's operation, config and its
    source), or the matching number 0-4. Overrides ``$GEMV_LOG_LEVEL``.

    Raises
    ------
    ValueError
        For any other level, naming the choices.
    """
    if isinstance(level, str) and level.lower() in _lib.LOG_LEVELS:
        code = _lib.LOG_LEVELS.index(level.lower())
    elif isinstance(level, int) and not isinstance(level, bool) and 0 <= level < len(_lib.LOG_LEVELS):
        code = level
    else:
        raise ValueError(f"level: expected one of {', '.join(_lib.LOG_LEVELS)} or 0-4, got {level!r}")
    _lib.check(_lib.load().gemv_set_log_level(code), "gemv_set_log_level")


def get_log_level() -> str:
    """libgemv's current log level, by name."""
    return _lib.LOG_LEVELS[_lib.load().gemv_get_log_level()]
