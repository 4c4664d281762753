"""nki_cpp.profile, bench and mesh give what `nki profile --json`, `nki bench --json` and `nki mesh --json` print."""
import json

import numpy as np

import nki_cpp
from conftest import nki_json


def test_profile_is_the_dict_nki_profile_json_prints():
    got = nki_cpp.profile("tensor_add_nc2", (512, 2048), (512, 2048), dtype="bf16", target="trn1")
    want = nki_json("profile", "tensor_add_nc2", "--shape", "512x2048", "--shape", "512x2048", "--dtype", "bf16",
                    "--target", "trn1", "--json")
    assert got == want
    assert got["kernel"] == "tensor_add_nc2" and got["latency_us"] > 0


def test_profile_takes_arrays_for_their_shapes_and_writes_a_trace(tmp_path):
    a = np.zeros((256, 1024), dtype=np.float32)
    trace = tmp_path / "t.json"
    from_arrays = nki_cpp.profile("tensor_add", a, a, trace=str(trace))
    assert from_arrays == nki_cpp.profile("tensor_add", (256, 1024), [256, 1024])
    events = json.loads(trace.read_text())["traceEvents"]
    assert any(e.get("ph") == "X" for e in events)


def test_bench_rows_are_nki_bench_json_configs():
    sweep, shapes = "P=64,128;F=512..2048", [(256, 4096), (256, 4096)]
    rows = nki_cpp.bench("tensor_add_tiled", sweep=sweep, shapes=shapes, iters=0, record=False)
    want = nki_json("bench", "tensor_add_tiled", "--sweep", sweep, "--shape", "256x4096", "--shape", "256x4096",
                    "--dtype", "bf16", "--iters", "0", "--no-record", "--json")
    assert rows == want["configs"]
    assert len(rows) == 6 and rows[0]["best"] is True
    assert [r["config"] for r in rows if r["best"]] == [want["best"]]


def test_bench_records_its_best_for_autotune():
    rows = nki_cpp.bench("tensor_add_tiled", sweep="P=32,128;F=256,1024", shapes=[(128, 2048), (128, 2048)],
                         target="inf2", iters=0)
    best = rows[0]["config"]
    profiled = nki_json("profile", "tensor_add_tiled", "--shape", "128x2048", "--shape", "128x2048", "--dtype", "bf16",
                        "--target", "inf2", "--autotune", "--json")
    assert profiled["config"] == best and profiled["autotuned"] is True


def test_replica_groups_against_numpy():
    devices = np.arange(8).reshape(2, 4)
    assert nki_cpp.mesh.replica_groups({"x": 2, "y": 4}, "y")["replica_groups"] == devices.tolist()
    assert nki_cpp.mesh.replica_groups("x=2,y=4", ["x"])["replica_groups"] == devices.T.tolist()
    assert nki_cpp.mesh.replica_groups("x=2,y=4", "x,y")["replica_groups"] == [devices.ravel().tolist()]
    ids = [7, 6, 5, 4, 3, 2, 1, 0]  # laid row-major into the mesh: a group is a row of them
    got = nki_cpp.mesh.replica_groups("x=2,y=4", "y", device_ids=ids)
    assert got == {"replica_groups": np.array(ids).reshape(2, 4).tolist(), "iota": None}
    assert got == nki_json("mesh", "replica-groups", "--mesh", "x=2,y=4", "--axes", "y", "--device-ids",
                           "7,6,5,4,3,2,1,0", "--json")


def test_sharding_against_numpy():
    got = nki_cpp.mesh.sharding({"x": 2, "y": 4}, ("x", "y"), (16, 16))
    positions = np.arange(8).reshape(2, 4)
    for entry in got["devices"]:
        i, j = map(int, np.argwhere(positions == entry["device"])[0])
        assert entry["slices"] == [[8 * i, 8 * i + 8], [4 * j, 4 * j + 4]]
        assert entry["padding"] == [0, 0] and entry["replica_id"] == 0
    assert got == nki_json("mesh", "sharding", "--mesh", "x=2,y=4", "--spec", "('x', 'y')", "--shape", "16x16", "--json")
    # A spec as Python writes it: rows over x and y together, columns replicated.
    replicated = nki_cpp.mesh.sharding("x=2,y=4", (("x", "y"), None), (16, 4))
    assert [d["slices"] for d in replicated["devices"]] == [[[2 * d, 2 * d + 2], [0, 4]] for d in range(8)]
