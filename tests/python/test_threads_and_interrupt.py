"""Launches from several Python threads at once, the GIL released meanwhile, and Ctrl-C stopping one."""
import os
import re
import signal
import threading
import time

import numpy as np
import pytest

import nki_cpp


def test_launches_from_several_threads_at_once():
    results, failures = {}, []

    def launch(t):
        try:
            for i in range(3):
                a = np.full((256, 1024), float(t), dtype=np.float32)
                b = np.arange(256 * 1024, dtype=np.float32).reshape(256, 1024) * 0.25 + i
                kernel = "tensor_add_nc2" if t % 2 else "tensor_add"
                results[(t, i)] = np.array_equal(nki_cpp.run(kernel, a, b, dtype="fp32"), a + b)
        except Exception as e:  # noqa: BLE001 - any failure fails the test below, named
            failures.append(f"thread {t}: {e!r}")

    threads = [threading.Thread(target=launch, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert len(results) == 12 and all(results.values())


def test_the_gil_is_released_while_a_launch_runs():
    # A Python thread counts while the main thread launches: with the GIL held by the launch it
    # could not run at all until the launch returned.
    counting = threading.Event()
    stop = threading.Event()
    count = [0]

    def counter():
        counting.set()
        while not stop.is_set():
            count[0] += 1

    a = np.ones((1024, 2048), dtype=np.float32)
    thread = threading.Thread(target=counter)
    thread.start()
    counting.wait()
    before = count[0]
    start = time.monotonic()
    nki_cpp.run("tensor_add", a, a, executor="reference")  # about a second of interpreter work
    during = count[0] - before
    elapsed = time.monotonic() - start
    stop.set()
    thread.join()
    assert elapsed > 0.2
    assert during > 10000, f"the counting thread ran {during} times during a {elapsed:.2f} s launch"


def test_ctrl_c_stops_a_running_launch():
    # tensor_add_nc2 over [2048, 8192] on the reference interpreter: 256 instances, seconds of
    # work. SIGINT once the launch has used 0.3 s of CPU (its cores run on threads kept from
    # earlier launches, so no new thread shows that it began); the runtime itself must stop the
    # launch (its KeyboardInterrupt says where), not Python after a launch that ran whole.
    a = np.ones((2048, 8192), dtype=np.float32)
    before = time.process_time()
    sent = []

    def interrupt_once_started():
        deadline = time.monotonic() + 120
        while time.process_time() - before < 0.3 and time.monotonic() < deadline:
            time.sleep(0.005)
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    watcher = threading.Thread(target=interrupt_once_started)
    watcher.start()
    with pytest.raises(KeyboardInterrupt) as stopped:
        nki_cpp.run("tensor_add_nc2", a, a, executor="reference")
    latency = time.monotonic() - sent[0]
    watcher.join()
    assert re.fullmatch(r"the launch of tensor_add was interrupted: NC[01] stopped before instance \[\d+,\d+\]",
                        str(stopped.value)), str(stopped.value)
    assert latency < 5, f"the launch took {latency:.1f} s to stop"
    # The request is cleared: the next launch runs whole.
    b = np.ones((128, 512), dtype=np.float32)
    np.testing.assert_array_equal(nki_cpp.run("tensor_add", b, b), b + b)
