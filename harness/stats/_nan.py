"""NaN-aware reductions that return NaN for empty slices without warnings."""

from __future__ import annotations

import warnings

import numpy as np


def nanmean(a: np.ndarray, axis=None) -> np.ndarray:
    a = np.asarray(a)
    if a.size and np.isfinite(a).all():  # numpy's nan-functions are several times slower
        return np.mean(a, axis=axis)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(a, axis=axis)


def nanvar(a: np.ndarray, axis=None, ddof: int = 0) -> np.ndarray:
    a = np.asarray(a)
    if a.size and np.isfinite(a).all():
        return np.var(a, axis=axis, ddof=ddof)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanvar(a, axis=axis, ddof=ddof)


def nanmax(a: np.ndarray, axis=None) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmax(a, axis=axis)


def nanmin(a: np.ndarray, axis=None) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmin(a, axis=axis)


def nanmedian(a: np.ndarray, axis=None) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmedian(a, axis=axis)
