"""Optional compiled kernels (numba, the extra ``fast``) for the hottest loops over points.

A module keeps its kernels as plain Python functions written for numba's nopython mode (scalar
loops, no allocation inside them) next to the numpy code they replace, and asks
:func:`compile_kernels` for the compiled versions on first use. Without numba, or with the
environment variable ``XSLIT_NO_NUMBA`` set to anything but ``0`` or an empty string (to
measure or test the numpy path), the kernels are never compiled and the numpy code runs; both
give the same numbers up to rounding.
"""

from __future__ import annotations

import functools
import importlib.util
import os

__all__ = ["BACKENDS", "USE_NUMBA", "compile_kernels", "lapack_routines", "routine_caller",
           "select_kernels"]

#: Whether the compiled kernels are used: numba is installed and ``XSLIT_NO_NUMBA`` is not set.
#: A module reads it at each call (tests switch the numpy path on by setting it False).
USE_NUMBA = (importlib.util.find_spec("numba") is not None
             and os.environ.get("XSLIT_NO_NUMBA", "") in ("", "0"))


#: The ``backend`` arguments of the functions with compiled kernels.
BACKENDS = ("auto", "numba", "numpy")


def select_kernels(backend: str, compiled, what: str, *, available: bool = True):
    """The compiled kernels that ``backend`` selects, or None for the numpy code.

    ``"auto"`` follows the package's switch (:data:`USE_NUMBA`), ``"numba"`` requires the
    kernels, ``"numpy"`` never compiles them.

    Parameters
    ----------
    backend : {"auto", "numba", "numpy"}
    compiled : callable
        The module's cached compiler: its kernels, or None when numba cannot be imported.
    what : str
        The function or class the kernels serve (named when numba is missing).
    available : bool
        False when the module has ruled numba out (its kernels are then never compiled).

    Raises
    ------
    ValueError
        When ``backend`` is not one of :data:`BACKENDS`.
    RuntimeError
        When ``backend="numba"`` and the kernels cannot be compiled.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be 'auto', 'numba' or 'numpy', got {backend!r}")
    wanted = available and (backend == "numba" or (backend == "auto" and USE_NUMBA))
    kernels = compiled() if wanted else None
    if kernels is None and backend == "numba":
        raise RuntimeError(f"the numba backend of {what} needs numba: pip install numba (or "
                           "pip install 'xslit[fast]')")
    return kernels


def compile_kernels(namespace: dict, names: tuple[str, ...]) -> bool:
    """Compile the functions ``namespace[name]`` with numba and bind the compiled versions to
    the same names (compiled functions call each other by their global names). The machine
    code is cached on disk; numba renews a kernel's cache when the kernel's own source file
    changes, not when only the module of a kernel it calls does (a kernel that calls another
    module's kernels keeps their old code until its own file changes or the ``__pycache__``
    directories are removed). A module whose kernels call BLAS or LAPACK routines declares
    ``call_routine = None``; it is bound to :func:`routine_caller`'s intrinsic here.

    Parameters
    ----------
    namespace : dict
        The module's ``globals()``.
    names : tuple of str

    Returns
    -------
    bool
        False when numba cannot be imported (nothing is bound).
    """
    try:
        import numba
    except ImportError:
        return False
    if "call_routine" in namespace:
        namespace["call_routine"] = routine_caller()
    for name in names:
        # error_model="numpy": a division by zero gives inf or NaN as in numpy, not an error.
        namespace[name] = numba.njit(cache=True, nogil=True, error_model="numpy")(
            namespace[name])
    return True


@functools.cache
def routine_caller():
    """numba's intrinsic ``call_routine(address, pointers)``: in a compiled kernel, the call of
    the routine at ``address`` (an integer, :func:`lapack_routines`) with the tuple of
    ``pointers`` (integers, e.g. ``a.ctypes.data``) as its arguments, for a routine that
    takes only pointers and returns nothing (Fortran's BLAS and LAPACK).

    A routine passed to a kernel as a ctypes function is converted by numba at each call of
    the kernel in Python (about 1.2 us per routine, three times that amid an estimate); an
    address is an integer argument.
    """
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def call_routine(typingctx, address, pointers):
        if not (isinstance(address, types.Integer) and isinstance(pointers, types.UniTuple)
                and isinstance(pointers.dtype, types.Integer)):
            return None
        count = pointers.count

        def codegen(context, builder, signature, args):
            pointer = ir.IntType(8).as_pointer()
            routine = builder.inttoptr(
                args[0], ir.FunctionType(ir.VoidType(), [pointer] * count).as_pointer())
            builder.call(routine, [builder.inttoptr(v, pointer)
                                   for v in cgutils.unpack_tuple(builder, args[1], count)])
            return context.get_dummy_value()

        return types.none(address, pointers), codegen

    return call_routine


@functools.cache
def lapack_routines(*names: str) -> tuple:
    """Addresses of BLAS and LAPACK routines of SciPy's library (``scipy.linalg.cython_blas``
    and ``cython_lapack``) that compiled kernels call directly (:func:`routine_caller`).

    numpy's ``linalg`` and matrix products call the same OpenBLAS kernels, so a compiled kernel
    that calls ``dsyrk`` where numpy's ``D.T @ D`` does, or ``dsygv`` where
    ``scipy.linalg.lapack.dsygv`` does, gets the same numbers bit for bit without the Python
    wrappers around each call. The addresses are passed to the kernels as arguments (a kernel
    that reads a routine from its globals cannot be cached on disk). Every argument of the
    routines is a pointer (Fortran's convention), and they return nothing.

    Parameters
    ----------
    *names : str
        Routine names: ``"dgemm"``, ``"dgemv"``, ``"dsyrk"``, ``"dsygv"``.

    Returns
    -------
    tuple of int
    """
    from numba.extending import get_cython_function_address

    return tuple(get_cython_function_address(
        "scipy.linalg." + ("cython_lapack" if name == "dsygv" else "cython_blas"), name)
        for name in names)
