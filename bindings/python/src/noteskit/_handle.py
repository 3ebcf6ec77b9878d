"""The one base of every object that owns a library handle: Store, Layout, Rows."""
from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, Optional, TypeVar

from . import _ffi
from .errors import ClosedError

H = TypeVar("H", bound="_Handle")


def _close_quietly(close: Callable[[int], int], handle: int) -> None:
    close(handle)


class _Handle:
    """Owns one handle: ``handle`` (ClosedError once closed), ``close()`` (idempotent, thread-safe),
    the context manager, and a finalizer that closes the handle when the object is collected."""

    #: What the handle is, for the ClosedError message ("the store is closed").
    _what = "handle"

    def _own(self, handle: int, close: Callable[[int], int]) -> None:
        self._handle: Optional[int] = handle
        self._close_function = close
        self._close_lock = threading.Lock()
        self._finalizer = weakref.finalize(self, _close_quietly, close, handle)

    @property
    def handle(self) -> int:
        """The raw handle for :mod:`noteskit._ffi` calls; :class:`ClosedError` once closed."""
        handle = self._handle
        if handle is None:
            raise ClosedError(f"the {self._what} is closed")
        return handle

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._handle is None

    def close(self) -> None:
        """Closes the handle. Closing twice does nothing."""
        with self._close_lock:
            handle, self._handle = self._handle, None
            if handle is None:
                return
            self._finalizer.detach()
            _ffi.check(self._close_function(handle))
            self._closed()

    def _closed(self) -> None:
        """What a subclass drops once its handle is closed."""

    def __enter__(self: H) -> H:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
