#!/usr/bin/env python3
"""Race helper for the security suites: swaps two paths with renameat2(RENAME_EXCHANGE)
in a tight loop, so a directory and a symbolic link trade places thousands of times a
second. Usage: _swapper.py PATH_A PATH_B SECONDS. Stops by itself after SECONDS (and when
its parent closes stdin); prints the number of swaps done on stdout. Linux only."""
import ctypes, os, select, sys, time

RENAME_EXCHANGE = 2
AT_FDCWD = -100

def main() -> int:
    a, b, seconds = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2]), float(sys.argv[3])
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = libc.renameat2
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    swaps = 0
    deadline = time.monotonic() + seconds
    print("ready", flush=True)
    while time.monotonic() < deadline:
        for _ in range(200):
            if renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
                err = ctypes.get_errno()
                print(f"error {os.strerror(err)}", file=sys.stderr, flush=True)
                return 2
            swaps += 1
        # Stop early when the parent closed our stdin.
        r, _, _ = select.select([sys.stdin], [], [], 0)
        if r and sys.stdin.read(1) == "":
            break
    # Leave the pair as it was found (an even number of swaps).
    if swaps % 2 == 1:
        renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
        swaps += 1
    print(swaps, flush=True)
    return 0

if __name__ == "__main__":
    sys.exit(main())
