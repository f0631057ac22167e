#!/usr/bin/env python3
"""Race helper for the several-roots suite (roots_race_test.ts): swaps a root away at a moment the
test does not choose, from another process, and keeps it swapped until told to put it back.

Usage: _root_swapper.py SECONDS. Reads commands from stdin, one a line:
  swap DELAY_US A B   after DELAY_US microseconds, exchange A and B (renameat2 RENAME_EXCHANGE:
                      a root and a link to an outside directory, or an impostor directory)
  move DELAY_US A B   after DELAY_US microseconds, rename A to B (the root goes away)
  back                undo the last swap or move (if it was done) and answer "back"
Prints "ready" first. Stops by itself after SECONDS or when stdin closes, undoing what it did.
Linux only."""
import ctypes, os, select, sys, time

RENAME_EXCHANGE = 2
AT_FDCWD = -100


def main() -> int:
    deadline = time.monotonic() + float(sys.argv[1])
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = libc.renameat2
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]

    def exchange(a: bytes, b: bytes) -> None:
        if renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
            raise OSError(ctypes.get_errno(), "renameat2")

    undo = None
    pending = b""
    print("ready", flush=True)
    while time.monotonic() < deadline:
        if b"\n" not in pending:
            # Unbuffered reads: a line left in a buffer would never wake select.
            r, _, _ = select.select([0], [], [], 0.5)
            if not r:
                continue
            chunk = os.read(0, 4096)
            if chunk == b"":
                break
            pending += chunk
            continue
        line, pending = pending.split(b"\n", 1)
        cmd = line.decode().split()
        if cmd[0] == "back":
            if undo is not None:
                undo()
                undo = None
            print("back", flush=True)
            continue
        delay = int(cmd[1]) / 1e6
        a, b = os.fsencode(cmd[2]), os.fsencode(cmd[3])
        # Busy-wait: a sleep this short would be rounded up to the scheduler's tick.
        until = time.perf_counter() + delay
        while time.perf_counter() < until:
            pass
        if cmd[0] == "swap":
            exchange(a, b)
            undo = lambda a=a, b=b: exchange(a, b)
        else:
            os.rename(a, b)
            undo = lambda a=a, b=b: os.rename(b, a)
    if undo is not None:
        undo()
    return 0


if __name__ == "__main__":
    sys.exit(main())
