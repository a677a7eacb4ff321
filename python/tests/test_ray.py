"""The Ray Data recipe (sotto.ray): a local Ray cluster of 2 CPUs, a pool of 2 actors with
one sotto.Model each, map_batches over the 12 test clips and a missing file; every
transcript equals the sotto tool's, both actors did work, the bad file is an error row,
and the Parquet files read back as one table (a batch of failures alone typed as others)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

import sotto


def test_ray_data_two_actors_match_the_cli(cli, model_path, vad_path, clips, tmp_path):
    try:
        import ray
        import sotto.ray as sray
    except ImportError as e:  # setup-python.sh installs it; SOTTO_SKIP_RAY=1 leaves it out
        pytest.fail(f"Ray Data is not installed in this venv ({e}): run scripts/setup-python.sh without SOTTO_SKIP_RAY")
    assert len(clips) >= 10
    ref_dir = tmp_path / "ref"
    subprocess.run([cli, "transcribe", "-m", model_path, "--vad-model", vad_path, "--device", "cpu", "-t", "2",
                    "--beam-size", "1", "-f", "json", "--quiet", "--output-dir", str(ref_dir), *clips],
                   check=True, capture_output=True)
    missing = str(tmp_path / "missing.wav")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        ds = ray.data.from_items([{"path": p} for p in clips + [missing]])
        out = sray.transcribe_dataset(ds, model_path=model_path, vad_model=vad_path, actors=2, threads=1,
                                      batch_size=2, device="cpu", beam_size=1)
        rows = {r["path"]: r for r in out.take_all()}
        out.write_parquet(str(tmp_path / "pq"))
    finally:
        ray.shutdown()
    assert sorted(rows) == sorted(clips + [missing])
    for clip in clips:
        r = rows[clip]
        name = os.path.splitext(os.path.basename(clip))[0]
        ref = json.loads((ref_dir / f"{name}.json").read_text())
        assert r["error"] == ""
        assert (r["text"], r["language"]) == (ref["text"], ref["language"]), clip
        assert r["duration"] == pytest.approx(ref["duration"], abs=0.005)
        got = [(s["start"], s["end"], s["text"]) for s in r["segments"]]
        assert got == [(s["start"], s["end"], s["text"]) for s in ref["segments"]], clip
    assert "missing.wav" in rows[missing]["error"] and rows[missing]["text"] == ""
    workers = {r["worker"] for r in rows.values()}
    assert len(workers) == 2, f"expected 2 actors at work, got {workers}"
    import numpy as np
    import pyarrow.parquet as pq

    table = pq.read_table(str(tmp_path / "pq"))  # every batch's file, one schema
    assert sorted(table.column("path").to_pylist()) == sorted(clips + [missing])
    t = sray.Transcriber(model_path=model_path, vad_model=vad_path, device="cpu", beam_size=1)
    bad = t({"path": np.array([missing])})
    good = t({"path": np.array([clips[0]])})
    assert bad.schema == good.schema and bad.column("error")[0].as_py()
    with pytest.raises(TypeError, match="ray.data.Dataset"):
        sray.transcribe_dataset([{"path": clips[0]}])
