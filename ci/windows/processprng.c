/*
 * bcryptprimitives.dll for a wine prefix whose wine lacks it (wine 8.0): the Rust standard
 * library (1.78 and later) imports ProcessPrng from it to seed its hash maps and fill random
 * buffers, so without this DLL every Rust .exe fails to start (c0000135). Real Windows has
 * the DLL; CI copies this one only into the prefix of its own wine run (ci/windows.sh).
 *
 * ProcessPrng fills the buffer from the system's generator through RtlGenRandom
 * (advapi32!SystemFunction036), in pieces of at most ULONG_MAX bytes, and, like Windows',
 * always returns TRUE.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG piece = length > 0x80000000u ? 0x80000000u : (ULONG)length;
        if (!SystemFunction036(data, piece)) {
            /* Windows' ProcessPrng never fails; a failing generator must not look random. */
            RaiseException(0xC00000E5u /* STATUS_INTERNAL_ERROR */, EXCEPTION_NONCONTINUABLE, 0, NULL);
        }
        data += piece;
        length -= piece;
    }
    return TRUE;
}
